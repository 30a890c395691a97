"""The one way every worker builds a dead letter.

A dead letter keeps the failed record's key and value bytes (a value too large for the DLQ is
truncated, see :func:`streams.limits.dead_letter_value`) and carries the typed headers of
:func:`schemas.dlq.dead_letter_headers` naming the error and the record's source. Workers send
it their own way (the runner and calibrate with aiokafka, detect through Faust); they all
build it here, and count and log it with :func:`note_dead_letter`.
"""

from __future__ import annotations

import logging
from typing import Any, NamedTuple

from schemas.dlq import dead_letter_headers
from streams import limits
from streams.metrics import Metrics

log = logging.getLogger(__name__)


class DeadLetter(NamedTuple):
    topic: str
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...]


def dead_letter(rec: Any, error_type: str, message: str, dlq_topic: str) -> DeadLetter:
    """The dead letter of ``rec`` (anything with topic, partition, offset, key and value)."""
    headers = dead_letter_headers(error_type, message, rec.topic, rec.partition, rec.offset)
    value, headers = limits.dead_letter_value(rec.value, rec.key, headers)
    return DeadLetter(dlq_topic, rec.key, value, tuple(headers))


def note_dead_letter(metrics: Metrics, worker: str, rec: Any, error_type: str) -> None:
    """Count a dead letter and log where it came from (the error type only: no content)."""
    metrics.dead_letters.labels(worker, error_type).inc()
    log.warning("%s: dead-lettered %s[%d]@%d: %s", worker, rec.topic, rec.partition,
                rec.offset, error_type)

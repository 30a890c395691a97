"""Dead-letter record headers (DESIGN: ``<input topic>.dlq``).

The original key and value bytes travel untouched; these headers say what went wrong.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime

from schemas.base import AwareTime, Frozen

#: ``error.type`` values used by judgeflow (stable tokens; dashboards group by them). The
#: only ones a dead letter may carry: :func:`dead_letter_headers` refuses any other, and
#: docs/contracts.md lists exactly these (a test checks both and every literal in the code).
ERROR_TYPES = (
    "invalid_json",
    "schema_error",
    "unknown_criterion",
    "unknown_case",
    "unknown_task",
    "invalid_output",
    "llm_failure",
    #: the LLM was unavailable (429/529/5xx/timeout/connection after our retries): no
    #: result was published, so a replay of these dead letters judges the record again.
    "llm_unavailable",
    "internal_error",
    "oversized",
    #: an agent answer whose Kafka key is not its cell key (it would split the cell's state)
    "key_mismatch",
)

MAX_MESSAGE_BYTES = 2000


class DeadLetterHeaders(Frozen):
    error_type: str
    error_message: str
    source_topic: str
    source_partition: int
    source_offset: int
    failed_at: AwareTime

    def to_kafka(self) -> list[tuple[str, bytes]]:
        msg = self.error_message.encode("utf-8")[:MAX_MESSAGE_BYTES]
        return [
            ("error.type", self.error_type.encode()),
            ("error.message", msg),
            ("source.topic", self.source_topic.encode()),
            ("source.partition", str(self.source_partition).encode()),
            ("source.offset", str(self.source_offset).encode()),
            ("failed_at", self.failed_at.isoformat().encode()),
        ]

    @classmethod
    def from_kafka(
        cls, headers: Iterable[tuple[str, bytes]] | Mapping[str, bytes]
    ) -> DeadLetterHeaders:
        items = headers.items() if isinstance(headers, Mapping) else headers
        h = {k: v.decode("utf-8", "replace") for k, v in items}
        return cls(
            error_type=h["error.type"],
            error_message=h["error.message"],
            source_topic=h["source.topic"],
            source_partition=int(h["source.partition"]),
            source_offset=int(h["source.offset"]),
            failed_at=datetime.fromisoformat(h["failed_at"]),
        )


def dead_letter_headers(
    error_type: str, message: str, topic: str, partition: int, offset: int,
    now: datetime | None = None,
) -> list[tuple[str, bytes]]:
    """Headers for a dead letter; ``now`` is injectable for tests.

    An ``error_type`` outside :data:`ERROR_TYPES` is a programming error (ValueError).
    """
    if error_type not in ERROR_TYPES:
        raise ValueError(f"dead-letter type {error_type!r} is not one of {ERROR_TYPES}")
    return DeadLetterHeaders(
        error_type=error_type,
        error_message=message,
        source_topic=topic,
        source_partition=partition,
        source_offset=offset,
        failed_at=now or datetime.now(UTC),
    ).to_kafka()

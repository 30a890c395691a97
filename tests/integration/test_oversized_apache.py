"""Records up to a raised broker maximum (Apache Kafka with ``message.max.bytes`` 5 MiB, as
a hospital cluster carrying long transcripts might run) reach every worker and go to its
``.dlq`` as ``oversized``, truncated as documented (streams/limits.py: the first
``DLQ_TRUNCATED_VALUE_BYTES`` of the value, ``original.size`` and ``truncated.reason``
headers); the record behind each is processed and the workers stay alive.

The embedded broker's limit is 1 MiB, so this runs on Apache Kafka only (test_poison_records
covers records near 1 MiB on both brokers; both run the cases of
tests/integration/oversized.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from streams import kafka_clients
from tests.integration.oversized import CASES
from tests.kafka import apache_kafka_or_skip
from tools.kafka import ApacheKafka

pytestmark = pytest.mark.integration

BROKER_MAX = 5 * 1024 * 1024
#: The largest value the broker takes in a batch of one record (batch + record overhead).
NEAR_MAX = BROKER_MAX - 1024


@pytest.fixture(scope="module")
def kafka5m(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApacheKafka]:
    with apache_kafka_or_skip(message_max_bytes=BROKER_MAX,
                              work_dir=tmp_path_factory.mktemp("kafka5m")) as k:
        yield k


@pytest.fixture()
def bootstrap5m(kafka5m: ApacheKafka) -> str:
    return kafka5m.bootstrap


async def produce_big(bootstrap: str, topic: str, records: list[tuple[bytes, bytes]]) -> None:
    """As a producer configured for the raised limit would (max.request.size above it)."""
    producer = kafka_clients.producer(bootstrap, acks="all", enable_idempotence=True,
                                      max_request_size=BROKER_MAX + 64 * 1024)
    await producer.start()
    try:
        for key, value in records:  # one record per batch: the big one alone fits the max
            await producer.send_and_wait(topic, value=value, key=key)
    finally:
        await producer.stop()


@pytest.mark.parametrize("role", list(CASES))
async def test_each_worker_dead_letters_a_5mib_record(bootstrap5m: str, tmp_path: Path,
                                                     role: str) -> None:
    await CASES[role](bootstrap5m, tmp_path, NEAR_MAX, produce_big)

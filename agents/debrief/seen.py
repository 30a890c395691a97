"""Which evaluations already exist: read the output topic once at start.

A request redelivered after a crash (its offset was not committed yet) must not be graded
twice when its evaluation is already on the output topic.
"""

from __future__ import annotations

import asyncio
import logging

import orjson
from aiokafka import AIOKafkaConsumer, TopicPartition

log = logging.getLogger(__name__)


async def ids_on_topic(bootstrap: str, topic: str, field: str,
                       timeout: float = 60.0) -> set[str]:
    """Values of ``field`` in every record of ``topic`` up to its current end offsets."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False,
                                group_id=None, auto_offset_reset="earliest")
    await consumer.start()
    found: set[str] = set()
    try:
        parts = await consumer._client.fetch_all_metadata()
        ids = parts.partitions_for_topic(topic) or set()
        tps = [TopicPartition(topic, p) for p in sorted(ids)]
        if not tps:
            return found
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)  # before anything else: no reset race
        end = await consumer.end_offsets(tps)
        pending = {tp for tp in tps if end[tp] > 0}
        async with asyncio.timeout(timeout):
            while pending:
                batch = await consumer.getmany(timeout_ms=500)
                for tp, records in batch.items():
                    for rec in records:
                        _add(found, rec.value, field)
                    if records and records[-1].offset + 1 >= end[tp]:
                        pending.discard(tp)
    finally:
        await consumer.stop()
    log.info("%d existing record id(s) on %s", len(found), topic)
    return found


def _add(found: set[str], value: bytes | None, field: str) -> None:
    try:
        data = orjson.loads(value or b"")
    except orjson.JSONDecodeError:
        return
    if isinstance(data, dict) and isinstance(data.get(field), str):
        found.add(data[field])

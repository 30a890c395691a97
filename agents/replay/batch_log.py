"""The durable record of the Message Batches a replay submitted (see :mod:`schemas.replay`)."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import ValidationError

from schemas.replay import ReplayBatch
from streams import kafka_clients
from streams.settings import Settings
from streams.topics import read_to_end


async def recorded(settings: Settings, group: str, input_topic: str) -> list[ReplayBatch]:
    """The batches this replay (group, input topic) submitted, oldest first."""
    found: list[ReplayBatch] = []
    async for rec in read_to_end(settings.kafka, [settings.topics.replay_batches]):
        try:
            b = ReplayBatch.model_validate_json(rec.value or b"")
        except ValidationError:
            continue
        if b.group == group and b.input_topic == input_topic:
            found.append(b)
    return sorted(found, key=lambda b: b.submitted_at)


async def record(settings: Settings, group: str, input_topic: str, version: str,
                 batch_id: str, custom_ids: list[str]) -> ReplayBatch:
    batch = ReplayBatch(group=group, input_topic=input_topic, prompt_version=version,
                        batch_id=batch_id, custom_ids=tuple(custom_ids),
                        submitted_at=datetime.now(UTC))
    # the topic exists: the replay's start made sure of its role's topics (replay-judge)
    producer = kafka_clients.producer(settings.kafka, acks="all", enable_idempotence=True)
    try:
        await producer.start()
        await producer.send_and_wait(settings.topics.replay_batches, key=group.encode(),
                                     value=batch.model_dump_json().encode())
    finally:
        await producer.stop()
    return batch

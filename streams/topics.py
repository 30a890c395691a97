"""Topic administration: make sure judgeflow's topics exist with the right partitions.

Inputs, outputs and their ``.dlq`` siblings are created with ``kafka.partitions``. The
detector's internal tick topic must be co-partitioned with the answers topic (same count),
so it is created with whatever count the answers topic actually has.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterable, Sequence

import orjson
from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from aiokafka import errors as kafka_errors
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from streams import kafka_clients
from streams.kafka_access import KafkaAccessError
from streams.kafka_acls import Acl, role_acls, topics_of
from streams.kafka_check import require
from streams.kafka_clients import KafkaTarget
from streams.settings import Settings

log = logging.getLogger(__name__)
#: How long a created topic may take to appear in the metadata of the broker we ask.
CREATE_VISIBLE_SECONDS = 30.0


def all_topics(settings: Settings) -> list[str]:
    t = settings.topics
    inputs = [t.agent_answers, t.judge_jobs, t.debrief_requests, t.adjudications]
    outputs = [t.cell_outcomes, t.judge_results, t.case_evaluations, t.calibration]
    return inputs + outputs + [t.dlq(name) for name in inputs] + [t.llm_journal, t.audit]


#: Topics whose old values are garbage once a newer value (or a tombstone) has the same key.
def compacted_topics(settings: Settings) -> frozenset[str]:
    return frozenset({settings.topics.llm_journal})


def topic_configs(name: str, settings: Settings) -> dict[str, str] | None:
    """Configs of a topic judgeflow creates: the journal is compacted; the audit trail is
    append-only and kept until the operator sets its retention (a broker's default of 7
    days would silently age the record of who saw which chart out)."""
    if name in compacted_topics(settings):
        return {"cleanup.policy": "compact"}
    if name == settings.topics.audit:
        return {"cleanup.policy": "delete", "retention.ms": "-1", "retention.bytes": "-1"}
    return None


async def partition_counts(admin: AIOKafkaAdminClient, topics: Iterable[str]) -> dict[str, int]:
    wanted = list(topics)
    described = await admin.describe_topics(wanted)
    counts: dict[str, int] = {}
    for item in described:
        if item.get("error_code", 0) == 0 and item.get("partitions"):
            counts[item["topic"]] = len(item["partitions"])
    return counts


async def ensure_topics(settings: Settings, extra: Iterable[str] = (),
                        role: str | None = None, acls: list[Acl] | None = None
                        ) -> dict[str, int]:
    """Create missing topics; return the partition count of every judgeflow topic. With a
    ``role`` (a worker's or a command's start): first stop in one line if its principal
    lacks an ACL the role needs (:mod:`streams.kafka_check`; ``acls``: only these, what one
    command of the role needs), then only the topics those ACLs name."""
    if role is not None:
        acls = role_acls(role, settings) if acls is None else acls
        await require(settings, role, acls)
    ticks = settings.topics.detect_ticks
    wanted = all_topics(settings) if acls is None else topics_of(acls, settings)
    with_ticks = role in (None, "detect")
    admin = kafka_clients.admin(settings.kafka)
    await admin.start()
    try:
        names = [n for n in dict.fromkeys([*wanted, *extra]) if n != ticks]
        existing = set(await admin.list_topics())
        missing = [n for n in names if n not in existing]
        if missing:
            await _create(admin, missing, settings.kafka.partitions, settings)
        counts = await visible_counts(admin, names)
        if not with_ticks:
            return counts
        answers_parts = counts[settings.topics.agent_answers]
        if ticks not in existing:
            await _create(admin, [ticks], answers_parts, settings)
        counts.update(await visible_counts(admin, [ticks]))
        if counts.get(ticks) != answers_parts:
            raise RuntimeError(
                f"{ticks} has {counts.get(ticks)} partitions but {settings.topics.agent_answers} "
                f"has {answers_parts}; they must be co-partitioned (delete {ticks} to recreate)")
        return counts
    finally:
        await admin.close()


async def _create(admin: AIOKafkaAdminClient, names: list[str], partitions: int,
                  settings: Settings) -> None:
    log.info("creating %d topic(s) with %d partitions: %s", len(names), partitions,
             ", ".join(names))
    new = [NewTopic(name=n, num_partitions=partitions,
                    replication_factor=settings.kafka.replication_factor,
                    topic_configs=topic_configs(n, settings))
           for n in names]
    try:
        response = await admin.create_topics(new)
    except Exception as exc:  # a concurrent creator; verified by the describe that follows
        if "TopicAlreadyExists" not in type(exc).__name__ + str(exc):
            raise
        return
    for topic, code, *_ in getattr(response, "topic_errors", ()):
        error = kafka_errors.for_code(code)
        if error is kafka_errors.TopicAuthorizationFailedError:
            raise KafkaAccessError(
                f"topic {topic} does not exist and this principal may not create it: create it "
                "(deploy/k8s/strimzi/topics.yaml) or grant Create on it")
        if error not in (kafka_errors.NoError, kafka_errors.TopicAlreadyExistsError):
            raise error(f"creating topic {topic}")


async def visible_counts(admin: AIOKafkaAdminClient, names: Iterable[str],
                         timeout: float = CREATE_VISIBLE_SECONDS) -> dict[str, int]:
    """:func:`partition_counts` once every topic of ``names`` is visible. Apache Kafka
    answers CreateTopics once the controller has the topics; each broker's metadata learns
    of them a moment later, and the admin client asks whichever broker it likes."""
    wanted = set(names)
    deadline = time.monotonic() + timeout
    while len(counts := await partition_counts(admin, wanted)) < len(wanted):
        if time.monotonic() >= deadline:
            missing = sorted(wanted - counts.keys())
            raise RuntimeError(f"topics not visible after {timeout:g}s: {', '.join(missing)}")
        await asyncio.sleep(0.1)
    return counts


async def assign_all(consumer: AIOKafkaConsumer, topics: Sequence[str], *,
                     wait: float = 0.0) -> list[TopicPartition]:
    """Assign every partition of ``topics`` to a group-less consumer, refreshing metadata
    (a topic may be new) and waiting up to ``wait`` seconds for missing topics to appear.
    Returns the assigned partitions (those of missing topics left out)."""
    deadline = time.monotonic() + wait
    while True:
        await consumer._client.force_metadata_update()
        found = {t: sorted(consumer.partitions_for_topic(t) or ()) for t in topics}
        if all(found.values()) or time.monotonic() >= deadline:
            break
        await asyncio.sleep(0.1)
    tps = [TopicPartition(t, p) for t, parts in found.items() for p in parts]
    if tps:
        consumer.assign(tps)
    return tps


async def send_all(kafka: KafkaTarget, topic: str,
                   records: Sequence[tuple[bytes | None, bytes]]) -> None:
    """Produce ``(key, value)`` records in order and wait until the broker has them all."""
    producer = kafka_clients.producer(kafka, acks="all", linger_ms=10,
                                      enable_idempotence=True, max_batch_size=256 * 1024)
    try:  # stopped also when its start failed
        await producer.start()
        futures = [await producer.send(topic, value=v, key=k) for k, v in records]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def read_to_end(kafka: KafkaTarget, topics: Sequence[str],
                      timeout: float = 120.0) -> AsyncIterator[ConsumerRecord[bytes, bytes]]:
    """Every record of ``topics`` from the beginning up to their end offsets at the time of
    the call, as an async iterator (missing topics are skipped). Commits nothing; raises
    TimeoutError when the end is not reached within ``timeout`` seconds. The one way to
    "read what a topic holds now"; live followers keep their own consumer."""
    consumer = kafka_clients.consumer(kafka, enable_auto_commit=False, group_id=None,
                                      auto_offset_reset="earliest")
    try:  # stopped also when it never started (an unreachable broker): nothing leaks
        await consumer.start()
        tps = await assign_all(consumer, topics)
        if not tps:
            return
        await consumer.seek_to_beginning(*tps)
        ends: dict[TopicPartition, int] = await consumer.end_offsets(tps)
        todo = {tp for tp in tps if ends[tp] > 0}
        deadline = time.monotonic() + timeout
        while todo:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{', '.join(topics)} not read to its end in {timeout:g}s")
            batch = await consumer.getmany(*todo, timeout_ms=500)
            for records in batch.values():
                for rec in records:
                    yield rec
            # position, not the last offset seen: transaction markers leave gaps
            todo = {tp for tp in todo if await consumer.position(tp) < ends[tp]}
    finally:
        await consumer.stop()


async def ids_on_topic(kafka: KafkaTarget, topic: str, field: str,
                       timeout: float = 120.0) -> set[str]:
    """The string values of ``field`` in every record of ``topic`` up to its current end.

    Linear in the topic's size; only the ids are kept.
    """
    found: set[str] = set()
    async for rec in read_to_end(kafka, [topic], timeout):
        _add_id(found, rec.value, field)
    log.info("%d existing id(s) (%s) on %s", len(found), field, topic)
    return found


def _add_id(found: set[str], value: bytes | None, field: str) -> None:
    try:
        data = orjson.loads(value or b"")
    except orjson.JSONDecodeError:
        return
    if isinstance(data, dict) and isinstance(data.get(field), str):
        found.add(data[field])

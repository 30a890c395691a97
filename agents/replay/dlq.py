"""Re-drive dead letters to the topic they came from, after the cause has been fixed.

Each dead letter is sent back with its original key and value bytes (untouched) to the topic
named by its ``source.topic`` header (else the DLQ name without ``.dlq``), with one extra
header, ``dlq.replayed_from = <dlq topic>:<partition>:<offset>``, for tracing.

Resumable and idempotent: a run reads the DLQ under its own consumer group,
``judgeflow-replay-dlq.<dlq topic>.<type or "all">``, and commits a batch only after the
broker has acknowledged every record it re-drove. A run skips what another run already
covered: a run for ``--type T`` skips records below the "all" group's committed offsets, and
an unfiltered run skips type-T records below the ``T`` group's. A second run therefore
re-drives only dead letters that arrived since (e.g. records that failed again).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from streams import kafka_clients
from streams.errors import StreamsError
from streams.exit_codes import CommandError
from streams.kafka_acls import dlq_acls
from streams.kafka_check import require
from streams.settings import Settings
from streams.topics import assign_all

log = logging.getLogger(__name__)
REPLAYED_FROM = "dlq.replayed_from"


def group_for(dlq_topic: str, error_type: str | None) -> str:
    return f"judgeflow-replay-dlq.{dlq_topic}.{error_type or 'all'}"


def headers_of(rec: Any) -> dict[str, str]:
    return {k: v.decode("utf-8", "replace") for k, v in rec.headers or ()}


def target_of(dlq_topic: str, headers: dict[str, str]) -> str:
    return headers.get("source.topic") or dlq_topic.removesuffix(".dlq")


@dataclass
class Tally:
    total: int = 0  # records between the start position and the end offsets
    read: int = 0
    redriven: Counter[str] = field(default_factory=Counter)
    already: Counter[str] = field(default_factory=Counter)
    filtered: Counter[str] = field(default_factory=Counter)
    targets: Counter[str] = field(default_factory=Counter)


Progress = Callable[[Tally], None]


class Replayer:
    def __init__(self, settings: Settings, dlq_topic: str, error_type: str | None,
                 dry_run: bool, batch_size: int = 500) -> None:
        if not dlq_topic.endswith(".dlq"):
            # a usage mistake (exit 2), found before any connection
            raise CommandError(f"{dlq_topic!r} is not a dead-letter topic (its name ends in "
                               ".dlq)")
        self.s, self.topic, self.type, self.dry_run = settings, dlq_topic, error_type, dry_run
        self.tally = Tally()
        self.batch_size = batch_size
        self._covers: dict[str, dict[TopicPartition, int]] = {}
        self._admin: AIOKafkaAdminClient | None = None

    async def _covered(self, error_type: str, tp: TopicPartition, offset: int) -> bool:
        """Whether another run's group (see module doc) already re-drove this record."""
        other = group_for(self.topic, None if self.type else error_type)
        if other not in self._covers:
            assert self._admin is not None
            got = await self._admin.list_consumer_group_offsets(other)
            self._covers[other] = {t: m.offset for t, m in got.items() if m.offset >= 0}
        return offset < self._covers[other].get(tp, 0)

    async def run(self, progress: Progress | None = None) -> Tally:
        k = self.s.kafka
        # its ACLs first (a dry run sends nothing: no Write), each missing one named
        needed = [a for a in dlq_acls(self.s, self.topic)
                  if not (self.dry_run and a.operation == "Write")]
        await require(self.s, "replay-dlq", needed)
        await kafka_clients.join_group(k, group_for(self.topic, self.type))
        consumer = kafka_clients.consumer(k, enable_auto_commit=False,
                                          group_id=group_for(self.topic, self.type),
                                          auto_offset_reset="earliest")
        # a dry run has no producer: an idempotent one would ask for a producer id
        producer = None if self.dry_run else kafka_clients.producer(
            k, acks="all", enable_idempotence=True)
        self._admin = kafka_clients.admin(k)
        try:  # every client stopped on every way out, also one whose start failed
            await consumer.start()
            if producer is not None:
                await producer.start()
            await self._admin.start()
            await self._drain(consumer, producer, progress)
        finally:
            await self._admin.close()
            if producer is not None:
                await producer.stop()
            await consumer.stop()
        return self.tally

    async def _drain(self, consumer: AIOKafkaConsumer, producer: AIOKafkaProducer | None,
                     progress: Progress | None) -> None:
        tps = await assign_all(consumer, [self.topic])
        if not tps:
            raise StreamsError(f"topic {self.topic!r} does not exist")
        ends = await consumer.end_offsets(tps)
        for tp in tps:
            start = await consumer.committed(tp)
            if start is None:
                await consumer.seek_to_beginning(tp)
            else:
                consumer.seek(tp, start)
            self.tally.total += max(0, ends[tp] - await consumer.position(tp))
        todo = {tp for tp in tps if await consumer.position(tp) < ends[tp]}
        while todo:
            batch = await consumer.getmany(*todo, timeout_ms=500, max_records=self.batch_size)
            await self._batch(consumer, producer, batch, ends)
            if progress is not None:
                progress(self.tally)
            todo = {tp for tp in todo if await consumer.position(tp) < ends[tp]}

    async def _batch(self, consumer: AIOKafkaConsumer, producer: AIOKafkaProducer | None,
                     batch: dict[TopicPartition, list[Any]],
                     ends: dict[TopicPartition, int]) -> None:
        futures, commit = [], {}
        for tp, records in batch.items():
            for rec in records:
                if rec.offset >= ends[tp]:
                    break
                self.tally.read += 1
                commit[tp] = rec.offset + 1
                h = headers_of(rec)
                etype = h.get("error.type", "unknown")
                if self.type is not None and etype != self.type:
                    self.tally.filtered[etype] += 1
                elif await self._covered(etype, tp, rec.offset):
                    self.tally.already[etype] += 1
                else:
                    self.tally.redriven[etype] += 1
                    target = target_of(self.topic, h)
                    self.tally.targets[target] += 1
                    if producer is not None:  # not a dry run
                        mark = f"{self.topic}:{rec.partition}:{rec.offset}".encode()
                        futures.append(await producer.send(
                            target, key=rec.key, value=rec.value, headers=[(REPLAYED_FROM, mark)]))
        for fut in futures:
            await fut  # acknowledged before the offsets move
        if commit and not self.dry_run:
            await consumer.commit(commit)

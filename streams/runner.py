"""A concurrent consume -> handle -> produce worker for the LLM-bound workers (judge, debrief).

Records are handled concurrently (up to ``concurrency`` at once, across partitions), so one
slow LLM call does not block the records behind it. Offsets are committed only up to the
lowest record whose outputs are not yet acknowledged by the broker (at-least-once: a worker
killed at any point loses nothing; redelivered records must be handled idempotently).
A record the handler rejects with :class:`BadRecord` goes to the DLQ; so does one whose
handler crashed, so a bug never stops the worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRebalanceListener, TopicPartition

from schemas.dlq import dead_letter_headers
from streams.errors import BadRecord
from streams.groups import client_id, evict_dead_members
from streams.metrics import Metrics
from streams.settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Output:
    topic: str
    key: bytes | None
    value: bytes
    headers: tuple[tuple[str, bytes], ...] = ()


Handler = Callable[[Any], Awaitable[Sequence[Output]]]


class Deferred(Exception):
    """Raised by a handler: the record is left to a later run (not done, not dead-lettered);
    its offset and every later one of its partition stay uncommitted. Replays use it to stop
    at their end offsets and at their budget."""


@dataclass
class _Partition:
    in_flight: set[int] = field(default_factory=set)
    next_commit: int | None = None  # offset to commit once nothing below it is in flight
    committed: int | None = None

    def committable(self) -> int | None:
        if self.in_flight:
            low = min(self.in_flight)
            return low if self.committed is None or low > self.committed else None
        if self.next_commit is not None and self.next_commit != self.committed:
            return self.next_commit
        return None


class ConcurrentWorker:
    def __init__(self, settings: Settings, *, name: str, topic: str, group_id: str,
                 handler: Handler, concurrency: int, metrics: Metrics,
                 max_poll_records: int | None = None) -> None:
        self.settings = settings
        self.name = name
        self.topic = topic
        self.group_id = group_id
        self.handler = handler
        self.concurrency = concurrency
        self.metrics = metrics
        self.dlq_topic = settings.topics.dlq(topic)
        self.max_poll = max_poll_records or max(2 * concurrency, 16)
        self.stop_event = asyncio.Event()
        self._parts: dict[TopicPartition, _Partition] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._sem = asyncio.Semaphore(concurrency)
        self._fatal: BaseException | None = None
        self.consumer: AIOKafkaConsumer | None = None
        self.producer: AIOKafkaProducer | None = None

    # -- lifecycle -----------------------------------------------------------------
    async def run(self) -> None:
        k = self.settings.kafka
        self.producer = AIOKafkaProducer(bootstrap_servers=k.bootstrap_servers, acks="all",
                                         enable_idempotence=True, linger_ms=5)
        if k.evict_dead_members:
            await evict_dead_members(k.bootstrap_servers, self.group_id)
        self.consumer = AIOKafkaConsumer(
            bootstrap_servers=k.bootstrap_servers, group_id=self.group_id,
            client_id=client_id(self.name),
            enable_auto_commit=False, auto_offset_reset="earliest",
            max_poll_records=self.max_poll,
            session_timeout_ms=int(k.session_timeout_seconds * 1000),
            heartbeat_interval_ms=int(k.heartbeat_interval_seconds * 1000))
        await self.producer.start()
        try:
            await self.consumer.start()
            self.consumer.subscribe([self.topic], listener=_Listener(self))
            await self._loop()
        finally:
            await self._drain()
            with contextlib.suppress(Exception):
                await self._commit()
            await self.consumer.stop()
            await self.producer.stop()
        if self._fatal is not None:
            raise self._fatal

    def stop(self) -> None:
        self.stop_event.set()

    async def _loop(self) -> None:
        assert self.consumer is not None
        last_commit = time.monotonic()
        every = self.settings.kafka.commit_interval_seconds
        while not self.stop_event.is_set() and self._fatal is None:
            batch = await self.consumer.getmany(timeout_ms=200, max_records=self.max_poll)
            for tp, records in batch.items():
                for rec in records:
                    await self._sem.acquire()
                    if self._fatal is not None:
                        self._sem.release()
                        return
                    self._parts.setdefault(tp, _Partition()).in_flight.add(rec.offset)
                    task = asyncio.create_task(self._handle(tp, rec))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)
            if time.monotonic() - last_commit >= every:
                await self._commit()
                last_commit = time.monotonic()

    # -- one record ----------------------------------------------------------------
    async def _handle(self, tp: TopicPartition, rec: Any) -> None:
        try:
            self.metrics.records_in.labels(self.name, rec.topic).inc()
            try:
                outputs = list(await self.handler(rec))
            except Deferred:
                return  # stays in flight: nothing at or after it is committed
            except BadRecord as exc:
                outputs = [self._dead_letter(rec, exc.error_type, exc.message)]
            except Exception as exc:  # a bug in one record must not stop the worker
                # type and place only at ERROR: an exception message may quote input (PHI)
                log.error("%s: handler failed on %s[%d]@%d: %s", self.name, rec.topic,
                          rec.partition, rec.offset, type(exc).__name__)
                log.debug("%s: handler failure traceback", self.name, exc_info=True)
                outputs = [self._dead_letter(rec, "internal_error", f"{type(exc).__name__}: {exc}")]
            await self._send(outputs)
            state = self._parts.get(tp)
            if state is not None:
                state.in_flight.discard(rec.offset)
                state.next_commit = max(state.next_commit or 0, rec.offset + 1)
        except Exception as exc:  # producing failed: stop; uncommitted records are redelivered
            log.error("%s: cannot publish outputs (%s); stopping", self.name, exc)
            self._fatal = exc
            self.stop_event.set()
        finally:
            self._sem.release()

    def _dead_letter(self, rec: Any, error_type: str, message: str) -> Output:
        self.metrics.dead_letters.labels(self.name, error_type).inc()
        log.warning("%s: dead-lettered %s[%d]@%d: %s", self.name, rec.topic, rec.partition,
                    rec.offset, error_type)
        headers = dead_letter_headers(error_type, message, rec.topic, rec.partition, rec.offset)
        return Output(self.dlq_topic, rec.key, rec.value, tuple(headers))

    async def _send(self, outputs: Sequence[Output]) -> None:
        assert self.producer is not None
        futures = [await self.producer.send(o.topic, value=o.value, key=o.key,
                                            headers=list(o.headers) or None) for o in outputs]
        for o, fut in zip(outputs, futures, strict=True):
            await fut
            self.metrics.records_out.labels(self.name, o.topic).inc()

    # -- offsets -------------------------------------------------------------------
    async def _commit(self, only: Sequence[TopicPartition] | None = None) -> None:
        assert self.consumer is not None
        offsets = {}
        for tp, state in self._parts.items():
            if only is not None and tp not in only:
                continue
            offset = state.committable()
            if offset is not None:
                offsets[tp] = offset
        if offsets:
            await self.consumer.commit(offsets)
            for tp, offset in offsets.items():
                self._parts[tp].committed = offset

    @property
    def drain_seconds(self) -> float:
        """How long a stop or rebalance waits for in-flight records: one LLM deadline."""
        return self.settings.llm.deadline_seconds + 5.0

    async def _drain(self) -> None:
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=self.drain_seconds)

    async def on_revoked(self, revoked: Sequence[TopicPartition]) -> None:
        mine = [t for t in self._tasks]
        if mine:
            await asyncio.wait(mine, timeout=self.drain_seconds)
        with contextlib.suppress(Exception):
            await self._commit(revoked)
        for tp in revoked:
            self._parts.pop(tp, None)


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, worker: ConcurrentWorker) -> None:
        self.worker = worker

    async def on_partitions_revoked(self, revoked: Sequence[TopicPartition]) -> None:
        await self.worker.on_revoked(revoked)

    async def on_partitions_assigned(self, assigned: Sequence[TopicPartition]) -> None:
        log.info("%s: assigned %d partition(s)", self.worker.name, len(assigned))

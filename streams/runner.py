"""A concurrent consume -> handle -> produce worker for the LLM-bound workers (judge, debrief).

Records are handled concurrently (up to ``concurrency`` at once, across partitions), so one
slow LLM call does not block the records behind it. Offsets are committed only up to the
lowest record whose outputs are not yet acknowledged by the broker (at-least-once: a worker
killed at any point loses nothing; redelivered records must be handled idempotently).
A record the handler rejects with :class:`BadRecord` goes to the DLQ; so does one whose
handler crashed or overran its time bound, and one bigger than
:data:`~streams.limits.MAX_INPUT_RECORD_BYTES` (``oversized``), so no input stops the worker.

Provider outages dead-letter nothing: a handler that raises :class:`Unavailable` trips the
worker's :class:`~streams.breaker.CircuitBreaker`; while it is open no new attempt starts,
the partitions are paused (fetched records wait, uncommitted), and after a backoff one probe
record is tried; the first answer of the provider closes it and every waiting record is
handled again. Only a record that fails on its own (:data:`~streams.breaker.OWN_FAILURES`
times while the provider answered others) is dead-lettered. Gauges:
``judgeflow_breaker_state`` and ``judgeflow_consumer_lag``.

Broker faults are ridden out, never fatal (sending: :mod:`streams.publisher`): a failed send
is retried (only the outputs not yet acknowledged) until it succeeds or the worker stops, and
the record stays in flight meanwhile, so no offset is committed past it; an output the broker
refuses as too large is replaced by a dead letter of its input; a failed commit (broker
restart, rebalance) is logged and retried at the next interval, the consumer re-joining its
group on its next poll. Not so a refusal no retry can fix (a denied ACL or login,
:data:`streams.kafka_access.FATAL`): the worker stops, commits nothing past the record, and
:meth:`ConcurrentWorker.run` raises it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, TopicPartition
from aiokafka.errors import KafkaError

from streams import kafka_clients, limits, tracing
from streams.breaker import CLOSED, OWN_FAILURES, STATE_VALUES, CircuitBreaker, Ticket, bind
from streams.dlq import dead_letter, note_dead_letter
from streams.errors import BadRecord, Unavailable
from streams.kafka_access import is_fatal
from streams.metrics import Metrics
from streams.publisher import Output, Publisher
from streams.settings import Settings

log = logging.getLogger(__name__)
#: Longest time the loop goes without polling while records wait for a slot (the consumer
#: must poll within ``max.poll.interval.ms`` or it leaves its group).
KEEPALIVE_SECONDS = 30.0


Handler = Callable[[Any], Awaitable[Sequence[Output]]]


class Deferred(Exception):
    """Raised by a handler: the record is left to a later run (not done, not dead-lettered);
    its offset and every later one of its partition stay uncommitted. Replays use it to stop
    at their end offsets and at their budget."""


@dataclass
class PartitionOffsets:
    """Commit bookkeeping of one assigned partition. Records run side by side, so the
    offset that may be committed is the lowest one still in flight (everything below it
    is acknowledged), or one past the highest finished record when nothing is in flight."""

    in_flight: set[int] = field(default_factory=set)
    next_commit: int | None = None  # offset to commit once nothing below it is in flight
    committed: int | None = None

    def committable(self) -> int | None:
        """The offset to commit now, or None when the last commit already covers it."""
        if self.in_flight:
            low = min(self.in_flight)
            return low if self.committed is None or low > self.committed else None
        if self.next_commit is not None and self.next_commit != self.committed:
            return self.next_commit
        return None



def _traced(span: Any, outputs: list[Output] | None) -> None:
    """The step's outcome on its span: deferred, dead-lettered (by type) or published."""
    if span is None:
        return
    if outputs is None:
        span.set_attribute("judgeflow.outcome", "deferred")
        return
    letters = [dict(o.headers).get("error.type", b"").decode(errors="replace")
               for o in outputs if o.topic.endswith(".dlq")]
    span.set_attribute("judgeflow.outputs", len(outputs))
    span.set_attribute("judgeflow.outcome", "dead_letter" if letters else "published")
    if letters:
        tracing.fail(span, letters[0] or "dead_letter")

class ConcurrentWorker:
    def __init__(self, settings: Settings, *, name: str, topic: str, group_id: str,
                 handler: Handler, concurrency: int, metrics: Metrics,
                 call_deadline_seconds: float, max_poll_records: int | None = None,
                 max_input_bytes: int = limits.MAX_INPUT_RECORD_BYTES,
                 on_unavailable_letter: Callable[[Any], None] | None = None,
                 breaker_backoff_seconds: float = 2.0,
                 breaker_backoff_max_seconds: float = 60.0) -> None:
        self.settings = settings
        self.name = name
        self.topic = topic
        self.group_id = group_id
        self.handler = handler
        self.concurrency = concurrency
        self.metrics = metrics
        self.dlq_topic = settings.topics.dlq(topic)
        self.max_poll = max_poll_records or max(2 * concurrency, 16)
        self.max_input_bytes = max_input_bytes
        #: The deadline of one call the handler makes (``llm.deadline_seconds``).
        self.call_deadline = call_deadline_seconds
        #: No handler call may hold a slot longer than this (a few call deadlines: a call and
        #: its repair round-trip); past it the record is dead-lettered, the slot freed.
        self.handler_timeout = limits.HANDLER_DEADLINES * call_deadline_seconds + 5.0
        self.stop_event = asyncio.Event()
        self._parts: dict[TopicPartition, PartitionOffsets] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._sem = asyncio.Semaphore(concurrency)
        self.consumer: AIOKafkaConsumer | None = None
        #: an error no retry fixes (a denied ACL), raised by run() once the worker stopped
        self.fatal: BaseException | None = None
        self.publisher = Publisher(settings, name, metrics, self.dlq_topic, self._dead_letter,
                                   self.stop_event, self._fatal)
        self.breaker = CircuitBreaker(breaker_backoff_seconds, breaker_backoff_max_seconds,
                                      on_change=self._breaker_changed)
        metrics.breaker_state.labels(name).set(0)
        #: called with a record dead-lettered because it kept failing on its own
        self.on_unavailable_letter = on_unavailable_letter
        #: fetched records waiting for a slot (their offsets are already in flight)
        self._pending: deque[tuple[TopicPartition, Any]] = deque()
        #: partitions being revoked: their records waiting for the breaker give up
        self._revoking: set[TopicPartition] = set()
        self._task_tp: dict[asyncio.Task[None], TopicPartition] = {}
        #: records in flight whose probe failed; when they are all there is, the loop fetches
        #: more so that a fresh record can probe (one record failing on its own must not
        #: stall the partitions for ever)
        self._stale = 0

    # -- lifecycle -----------------------------------------------------------------
    async def run(self) -> None:
        k = self.settings.kafka
        self.publisher.producer = self.publisher.new_producer()
        await kafka_clients.join_group(k, self.group_id)
        self.consumer = kafka_clients.consumer(
            k, group_id=self.group_id, client_id=kafka_clients.client_id(self.name),
            enable_auto_commit=False, auto_offset_reset="earliest",
            max_poll_records=self.max_poll,
            session_timeout_ms=int(k.session_timeout_seconds * 1000),
            heartbeat_interval_ms=int(k.heartbeat_interval_seconds * 1000))
        await self.publisher.producer.start()
        try:
            await self.consumer.start()
            self.consumer.subscribe([self.topic], listener=_Listener(self))
            await self._loop()
        finally:
            await self._drain()
            with contextlib.suppress(Exception):
                await self._commit()
            await self.consumer.stop()
            if self.publisher.producer is not None:  # the current one (maybe renewed)
                await self.publisher.producer.stop()
        if self.fatal is not None:
            raise self.fatal

    def stop(self) -> None:
        self.stop_event.set()

    async def _loop(self) -> None:
        assert self.consumer is not None
        last_commit = last_poll = time.monotonic()
        every = self.settings.kafka.commit_interval_seconds
        while not self.stop_event.is_set():
            await self._dispatch()
            if not self._pending or time.monotonic() - last_poll >= KEEPALIVE_SECONDS:
                # records waiting for a slot, or an open breaker: fetch nothing new, unless
                # only records whose probe failed are left (a fresh one probes instead)
                self._hold(bool(self._pending) or (self.breaker.state != CLOSED and
                                                   self._stale < len(self._tasks)))
                try:
                    batch = await self.consumer.getmany(timeout_ms=200,
                                                        max_records=self.max_poll)
                except KafkaError as exc:  # broker gone or restarting: the client reconnects
                    if is_fatal(exc):
                        raise  # a denied ACL or login needs an operator, not retries
                    log.warning("%s: poll failed (%s); retrying", self.name,
                                type(exc).__name__)
                    await self._pause(1.0)
                    continue
                last_poll = time.monotonic()
                for tp, records in batch.items():
                    for rec in records:
                        self._parts.setdefault(tp, PartitionOffsets()).in_flight.add(
                            rec.offset)
                        self._pending.append((tp, rec))
            if time.monotonic() - last_commit >= every:
                await self._commit_or_log()
                self._report_lag()
                last_commit = time.monotonic()

    async def _dispatch(self) -> None:
        """Start the pending records while slots are free (waits at most 0.2 s for one)."""
        while self._pending and not self.stop_event.is_set():
            try:
                await asyncio.wait_for(self._sem.acquire(), 0.2)
            except TimeoutError:
                return
            if not self._pending:  # a revocation emptied it while we waited for the slot
                self._sem.release()
                return
            tp, rec = self._pending.popleft()
            if tp not in self._parts:  # revoked meanwhile: the new owner reads it again
                self._sem.release()
                continue
            task = asyncio.create_task(self._handle(tp, rec))
            self._tasks.add(task)
            self._task_tp[task] = tp
            task.add_done_callback(self._forget_task)

    def _forget_task(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._task_tp.pop(task, None)

    def _hold(self, paused: bool) -> None:
        """Pause (or resume) every assigned partition. Paused partitions' buffered records
        are dropped by the client and fetched again from the position after resuming."""
        assert self.consumer is not None
        if paused:
            self.consumer.pause(*self.consumer.assignment())
        elif self.consumer.paused():
            self.consumer.resume(*self.consumer.paused())

    def _breaker_changed(self, state: str) -> None:
        self.metrics.breaker_state.labels(self.name).set(STATE_VALUES[state])
        if state == CLOSED:
            log.warning("%s: the LLM provider answers again; resuming", self.name)
        elif state != "half_open":
            log.warning("%s: the LLM provider is unavailable; partitions paused, next probe "
                        "in %.1fs", self.name, self.breaker.backoff)

    def _report_lag(self) -> None:
        assert self.consumer is not None
        lag: dict[str, int] = {}
        for tp, state in self._parts.items():
            high = self.consumer.highwater(tp)
            if high is not None and state.committed is not None:
                lag[tp.topic] = lag.get(tp.topic, 0) + max(0, high - state.committed)
        for topic, n in lag.items():
            self.metrics.consumer_lag.labels(self.name, topic).set(n)

    async def _pause(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop_event.wait(), seconds)

    def _fatal(self, exc: BaseException) -> None:
        """Stop the worker for an error no retry fixes; :meth:`run` raises it."""
        if self.fatal is None:
            self.fatal = exc
        self.stop_event.set()

    async def _commit_or_log(self) -> None:
        try:
            await self._commit()
        except KafkaError as exc:  # retried at the next interval; a rebalance re-joins
            if is_fatal(exc):
                raise
            log.warning("%s: offset commit failed (%s); will retry", self.name,
                        type(exc).__name__)

    # -- one record ----------------------------------------------------------------
    async def _handle(self, tp: TopicPartition, rec: Any) -> None:
        # This generation's bookkeeping of the partition. A record still running when its
        # partition is revoked (past drain_seconds) may finish after the partition came
        # back; the new generation fetched again from the commit and may not have reached
        # the offsets below this one, so this record must not move its commit position.
        owner = self._parts.get(tp)
        try:
            self.metrics.records_in.labels(self.name, rec.topic).inc()
            size = len(rec.value or b"") + len(rec.key or b"")
            if size > self.max_input_bytes:
                outputs: list[Output] | None = [self._dead_letter(
                    rec, "oversized", f"record of {size} bytes exceeds the input limit of "
                    f"{self.max_input_bytes} bytes")]
            else:
                with tracing.step(self.name, rec.topic, rec.partition, rec.offset) as span:
                    outputs = await self._outputs(tp, rec)
                    _traced(span, outputs)
            if outputs is None:
                return  # stays in flight: nothing at or after it is committed
            if not await self.publisher.publish(rec, outputs):
                return  # stopping: left in flight, so never committed past; redelivered
            state = self._parts.get(tp)
            if state is not None and state is owner:
                state.in_flight.discard(rec.offset)
                state.next_commit = max(state.next_commit or 0, rec.offset + 1)
        finally:
            self._sem.release()

    async def _outputs(self, tp: TopicPartition, rec: Any) -> list[Output] | None:
        """The handler's outputs (or a dead letter); None: left for later (deferred, or the
        worker stops / loses the partition while the breaker is open)."""
        own = 0
        stale = False  # this record's probe failed: fresh records probe first
        try:
            while True:
                ticket = await self._admission(tp, fresh=not stale)
                if ticket is None:
                    return None
                bind(self.breaker, ticket)  # this attempt's LLM answers close the breaker
                try:
                    async with asyncio.timeout(self.handler_timeout):
                        outputs = list(await self.handler(rec))
                except Deferred:
                    self.breaker.finished(ticket)
                    return None
                except Unavailable as exc:
                    if not self.breaker.failed(ticket):
                        if ticket.probe and not stale:
                            stale = True
                            self._stale += 1
                        continue  # an outage: wait for the provider, then try again
                    own += 1
                    if own < OWN_FAILURES:
                        # calls that failed together may still be on their way: give them the
                        # time to open the breaker before this record tries again
                        await self._pause(self.breaker.base)
                        continue
                    if self.on_unavailable_letter is not None:
                        self.on_unavailable_letter(rec)
                    return [self._dead_letter(rec, exc.error_type, exc.message)]
                except BadRecord as exc:
                    outputs = [self._dead_letter(rec, exc.error_type, exc.message), *exc.after]
                except TimeoutError:
                    outputs = [self._dead_letter(rec, "llm_failure", "no result within "
                                                 f"{self.handler_timeout:g}s")]
                except Exception as exc:  # a bug in one record must not stop the worker
                    # type and place only at ERROR: an exception message may quote input (PHI)
                    log.error("%s: handler failed on %s[%d]@%d: %s", self.name, rec.topic,
                              rec.partition, rec.offset, type(exc).__name__)
                    log.debug("%s: handler failure traceback", self.name, exc_info=True)
                    outputs = [self._dead_letter(rec, "internal_error", type(exc).__name__)]
                self.breaker.finished(ticket)
                return outputs
        finally:
            self._stale -= stale

    async def _admission(self, tp: TopicPartition, fresh: bool) -> Ticket | None:
        """Wait until the breaker lets an attempt start; None when the worker stops or the
        partition is being revoked first."""
        while not self.stop_event.is_set() and tp not in self._revoking:
            ticket = await self.breaker.wait_turn(0.5, fresh)
            if ticket is not None:
                return ticket
        return None

    def _dead_letter(self, rec: Any, error_type: str, message: str) -> Output:
        note_dead_letter(self.metrics, self.name, rec, error_type)
        return Output(*dead_letter(rec, error_type, message, self.dlq_topic))

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
            # A rebalance may have revoked some of these partitions while the commit was
            # awaited (a reconnect after a cut-off): their state is gone, not an error
            # (a KeyError here ended the judge after a 30 s cut in CI).
            for tp, offset in offsets.items():
                kept = self._parts.get(tp)
                if kept is not None:
                    kept.committed = offset

    @property
    def drain_seconds(self) -> float:
        """How long a stop or rebalance waits for in-flight records: one call deadline."""
        return self.call_deadline + 5.0

    async def _drain(self) -> None:
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=self.drain_seconds)

    async def on_revoked(self, revoked: Sequence[TopicPartition]) -> None:
        self._revoking.update(revoked)  # records waiting for the breaker give up at once
        self._pending = deque(p for p in self._pending if p[0] not in self._revoking)
        in_flight_tasks = [t for t, tp in self._task_tp.items() if tp in self._revoking]
        if in_flight_tasks:
            await asyncio.wait(in_flight_tasks, timeout=self.drain_seconds)
        with contextlib.suppress(Exception):
            await self._commit(revoked)
        for tp in revoked:
            self._parts.pop(tp, None)
        self._revoking.difference_update(revoked)


class _Listener(ConsumerRebalanceListener):  # type: ignore[misc]
    def __init__(self, worker: ConcurrentWorker) -> None:
        self.worker = worker

    async def on_partitions_revoked(self, revoked: Sequence[TopicPartition]) -> None:
        await self.worker.on_revoked(revoked)

    async def on_partitions_assigned(self, assigned: Sequence[TopicPartition]) -> None:
        log.info("%s: assigned %d partition(s)", self.worker.name, len(assigned))

"""The judge worker's follower of the cell-outcomes and adjudications topics (the Kafka edge
of :mod:`agents.judge.gates`): every partition from the beginning, group-less (each judge
process keeps its own copy of the gate answers, which are few), decoded
(:func:`streams.decode.decode_record`) and stored. A record that is not valid, or on which
storing fails, is skipped, counted and logged (type and place only): no record stops the
follower. Should the follower fail after the start all the same (its consumer), it says so
at ERROR and starts again from the beginning (:func:`keep_following`), rather than leave the
judge with gate answers that silently no longer change.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from aiokafka import AIOKafkaConsumer, TopicPartition

from agents.judge.gates import GateAnswers
from schemas.calibration import Adjudication
from schemas.chart_review import CellOutcome
from streams import kafka_clients
from streams.decode import decode_record
from streams.errors import BadRecord
from streams.settings import Settings
from streams.topics import assign_all

log = logging.getLogger(__name__)
#: How long a start waits for the follower to read both topics to their end.
CATCH_UP_SECONDS = 60.0
#: Pause before a follower that failed after the start reads the topics again.
RESTART_SECONDS = 5.0


def absorb(store: GateAnswers, value: bytes | None, adjudication: bool = False) -> str | None:
    """Store one record (a cell outcome, or a reviewer's adjudication); the reason it was
    not stored (a dead-letter type, or the failure's type name), None when it was
    (adjudications that are not valid go to their DLQ in the calibrate worker)."""
    try:
        if adjudication:
            store.add_adjudication(decode_record(Adjudication, value))
        else:
            store.add(decode_record(CellOutcome, value))
    except BadRecord as exc:
        return exc.error_type
    except Exception as exc:  # a bug must not stop the follower: the record is skipped
        log.debug("judge: gate record failure traceback", exc_info=True)
        return type(exc).__name__
    return None


async def follow_outcomes(settings: Settings, store: GateAnswers,
                          ready: asyncio.Event | None = None) -> None:
    """Feed ``store`` until cancelled. ``ready`` is set once the topic has been read up to
    its end offsets at start (the worker waits for it: a gate cell decided before the
    worker started is known to the first job that needs it)."""
    consumer = kafka_clients.consumer(settings.kafka, group_id=None, enable_auto_commit=False,
                                      auto_offset_reset="earliest")
    skipped = 0
    try:  # stopped also when its start failed: no client left open
        await consumer.start()
        t = settings.topics
        tps = await assign_all(consumer, [t.cell_outcomes, t.adjudications], wait=5.0)
        ends: dict[TopicPartition, int] = {}
        if tps:
            await consumer.seek_to_beginning(*tps)
            ends = await consumer.end_offsets(tps)
        while True:
            if ready is not None and not ready.is_set() and \
                    await _at_end(consumer, ends):
                log.info("judge: %d gate answer(s) known at start", len(store))
                ready.set()
            batch = await consumer.getmany(timeout_ms=500, max_records=1000)
            for records in batch.values():
                for rec in records:
                    reason = absorb(store, rec.value, rec.topic == t.adjudications)
                    if reason is not None:
                        skipped += 1
                        log.warning("judge: skipped %s[%d]@%d (%s; %d so far)", rec.topic,
                                    rec.partition, rec.offset, reason, skipped)
    finally:
        await consumer.stop()


async def keep_following(settings: Settings, store: GateAnswers, ready: asyncio.Event,
                         who: str = "judge", pause: float = RESTART_SECONDS) -> None:
    """:func:`follow_outcomes` until cancelled. A failure before ``ready`` is raised (the
    start fails with it); after it, logged at ERROR and the topics read again."""
    while True:
        try:
            await follow_outcomes(settings, store, ready)
        except Exception as exc:
            if not ready.is_set():
                raise
            log.error("%s: the gate answer follower failed (%s); reading the cell outcomes "
                      "and adjudications again in %gs", who, type(exc).__name__, pause)
            log.debug("%s: gate follower failure traceback", who, exc_info=True)
            await asyncio.sleep(pause)


@contextlib.asynccontextmanager
async def following(settings: Settings, store: GateAnswers, who: str = "judge",
                    wait_seconds: float = CATCH_UP_SECONDS) -> AsyncIterator[GateAnswers]:
    """``store`` fed by :func:`follow_outcomes` while the block runs, entered only once both
    topics were read to their end (or ``wait_seconds`` passed: a warning, and the answers
    arrive as the follower catches up). The judge worker and ``replay judge`` both judge
    inside it, so a replay tells the model what production tells it. A follower that fails
    stops the start with its error. Nothing to follow when no criterion is gated."""
    if not store.fields:
        yield store
        return
    caught_up = asyncio.Event()
    follower = asyncio.get_running_loop().create_task(
        keep_following(settings, store, caught_up, who))
    waiter = asyncio.create_task(caught_up.wait())
    try:
        done, _ = await asyncio.wait({follower, waiter}, timeout=wait_seconds,
                                     return_when=asyncio.FIRST_COMPLETED)
        if follower in done:
            follower.result()  # the follower failed: its error stops the start
        elif not caught_up.is_set():
            log.warning("%s: cell outcomes not read to their end within %ss; gate answers "
                        "arrive as the follower catches up", who, wait_seconds)
        yield store
    finally:
        for task in (waiter, follower):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


async def _at_end(consumer: AIOKafkaConsumer, ends: dict[TopicPartition, int]) -> bool:
    for tp, end in ends.items():
        if await consumer.position(tp) < end:
            return False
    return True

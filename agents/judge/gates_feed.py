"""The judge worker's follower of the cell-outcomes and adjudications topics (the Kafka edge
of :mod:`agents.judge.gates`): every partition from the beginning, group-less (each judge
process keeps its own copy of the gate answers, which are few), decoded and stored. A record
that is not valid is skipped and counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from aiokafka import AIOKafkaConsumer, TopicPartition
from pydantic import ValidationError

from agents.judge.gates import GateAnswers
from schemas.calibration import Adjudication
from schemas.chart_review import CellOutcome
from streams import kafka_clients
from streams.settings import Settings
from streams.topics import assign_all

log = logging.getLogger(__name__)
#: How long a start waits for the follower to read both topics to their end.
CATCH_UP_SECONDS = 60.0


def absorb(store: GateAnswers, value: bytes | None, adjudication: bool = False) -> bool:
    """Store one record (a cell outcome, or a reviewer's adjudication); False when it is not
    a valid one (adjudications that are not go to their DLQ in the calibrate worker)."""
    try:
        if adjudication:
            store.add_adjudication(Adjudication.model_validate_json(value or b""))
        else:
            store.add(CellOutcome.model_validate_json(value or b""))
    except ValidationError:
        return False
    return True


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
                    if not absorb(store, rec.value, rec.topic == t.adjudications):
                        skipped += 1
                        log.warning("judge: skipped an invalid record of %s (%d so far)",
                                    rec.topic, skipped)
    finally:
        await consumer.stop()


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
        follow_outcomes(settings, store, caught_up))
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

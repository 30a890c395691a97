"""The Kafka edge: follow the result topics into the window and fan changes out to pages.

A group-less consumer (every page server sees every record; nothing is committed) assigned
to every partition of the four topics, from their end or from their beginning. Topics that
appear later are picked up (from their beginning: everything on them is new). aiokafka
reconnects by itself after a broker restart; any Kafka error is logged (without record
contents) and the loop goes on after a pause that doubles while Kafka stays unreachable (1 s
up to 30 s), so an unreachable broker costs one log line per pause, not one a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError

from dashboard.decided import Decisions
from dashboard.queue import queue_row
from dashboard.rows import cell_of
from dashboard.window import CALIBRATION, EVALUATIONS, JOBS, RESULTS, Window
from streams import kafka_clients
from streams.kafka_access import KafkaUnreachable, is_fatal
from streams.settings import Settings

ADJUDICATIONS = "adjudications"
Record = Callable[[Any], None]

log = logging.getLogger(__name__)


class Hub:
    """One bounded queue per open page; a page that cannot keep up is dropped (its browser
    reconnects and re-reads the window)."""

    def __init__(self, depth: int = 1000) -> None:
        self.depth = depth
        self.clients: set[asyncio.Queue[tuple[str, Any] | None]] = set()

    def subscribe(self) -> asyncio.Queue[tuple[str, Any] | None]:
        queue: asyncio.Queue[tuple[str, Any] | None] = asyncio.Queue(self.depth)
        self.clients.add(queue)
        return queue

    def unsubscribe(self, queue: asyncio.Queue[tuple[str, Any] | None]) -> None:
        self.clients.discard(queue)

    def publish(self, event: str, data: Any) -> None:
        for queue in list(self.clients):
            try:
                queue.put_nowait((event, data))
            except asyncio.QueueFull:
                self.clients.discard(queue)
                with contextlib.suppress(asyncio.QueueFull):
                    queue.get_nowait()
                    queue.put_nowait(None)  # tells the page's stream to close


@dataclass
class FeedStatus:
    assigned: int = 0
    records: int = 0
    undecodable: int = 0
    errors: int = 0
    #: partition look-ups done (one every ``rescan_seconds``)
    scans: int = 0
    topics: list[str] = field(default_factory=list)


@dataclass
class Backoff:
    """Pauses between retries: ``first``, doubling up to ``cap``; ``reset`` after a success."""

    first: float = 1.0
    cap: float = 30.0
    current: float = 0.0

    def next(self) -> float:
        self.current = min(self.cap, self.current * 2 if self.current else self.first)
        return self.current

    def reset(self) -> None:
        self.current = 0.0


def stream_topics(settings: Settings) -> dict[str, str]:
    t = settings.topics
    return {t.judge_results: RESULTS, t.judge_jobs: JOBS, t.case_evaluations: EVALUATIONS,
            t.calibration: CALIBRATION, t.adjudications: ADJUDICATIONS}


def absorb(window: Window, hub: Hub, stream: str, raw: bytes | None,
           status: FeedStatus, record: Record | None = None,
           decisions: Decisions | None = None) -> None:
    """Decode -> store -> tell the pages. Pure apart from the hub. Adjudications go to
    ``record`` (the decisions; it tells the pages itself)."""
    status.records += 1
    try:
        value = orjson.loads(raw or b"")
    except orjson.JSONDecodeError:
        status.undecodable += 1
        return
    if stream == ADJUDICATIONS:
        if record is not None:
            record(value)
        return
    rid = window.add(stream, value)
    if rid is None:
        status.undecodable += 1
    elif stream == RESULTS:
        hub.publish("result", window.row(rid) if decisions is None else queue_row(
            window, decisions, cell_of(value), window.seq(RESULTS, rid), value))
    elif stream in (EVALUATIONS, CALIBRATION):
        hub.publish(stream, {})


async def _partitions(consumer: AIOKafkaConsumer, topics: list[str]) -> set[TopicPartition]:
    await consumer._client.force_metadata_update()
    return {TopicPartition(t, p) for t in topics for p in consumer.partitions_for_topic(t) or ()}


async def _refresh(consumer: AIOKafkaConsumer, topics: list[str], current: set[TopicPartition],
                   from_beginning: bool, first: bool,
                   whole: frozenset[str] = frozenset()) -> set[TopicPartition]:
    """Follow partitions that appeared since the last look. ``assign`` starts a new
    assignment (positions forgotten), so it is called only when the set changed, and the
    partitions already followed are put back where they were. Topics in ``whole`` are
    always read from their beginning (the decisions: which cells are done)."""
    found = await _partitions(consumer, topics)
    if found == current or not found:
        return current
    positions = {tp: await consumer.position(tp) for tp in current}
    consumer.assign(list(found))
    for tp, offset in positions.items():
        consumer.seek(tp, offset)
    new = found - current
    if from_beginning or not first:
        await consumer.seek_to_beginning(*new)  # a topic that appeared later: all of it is new
    else:
        from_start = {tp for tp in new if tp.topic in whole}
        if from_start:
            await consumer.seek_to_beginning(*from_start)
        if new - from_start:
            await consumer.seek_to_end(*(new - from_start))
    log.info("following %d partition(s)", len(found))
    return found


async def _wait(status: FeedStatus, pause: Backoff, what: str, exc: KafkaError) -> None:
    """Count the error, log it by type (never its text: it may quote a record), pause."""
    status.errors += 1
    wait = pause.next()
    log.warning("%s (%s); retrying in %.0f s", what, type(exc).__name__, wait)
    await asyncio.sleep(wait)


async def run_feed(settings: Settings, window: Window, hub: Hub, status: FeedStatus, *,
                   from_beginning: bool, rescan_seconds: float = 2.0,
                   record: Record | None = None, decisions: Decisions | None = None,
                   backoff: Backoff | None = None) -> None:
    by_topic = stream_topics(settings)
    # the work list is read whole whatever --from-beginning says: the results and their jobs
    # (every pending cell), the decisions (which cells are done), the latest calibration
    t = settings.topics
    whole = frozenset({t.adjudications, t.judge_results, t.judge_jobs, t.calibration})
    status.topics = list(by_topic)
    consumer = kafka_clients.consumer(settings.kafka, group_id=None, enable_auto_commit=False,
                                      auto_offset_reset="earliest")
    current: set[TopicPartition] = set()
    loop = asyncio.get_running_loop()
    next_scan, first = 0.0, True
    pause = backoff or Backoff()
    try:  # the consumer is closed however this ends, also cancelled during its start
        while True:
            try:
                await consumer.start()
                break
            except (KafkaError, KafkaUnreachable) as exc:
                if is_fatal(exc):
                    raise  # a refused login or ACL: the dashboard stops with its one line
                await _wait(status, pause, "Kafka not reachable yet", exc)
        pause.reset()
        while True:
            try:
                if loop.time() >= next_scan:
                    current = await _refresh(consumer, list(by_topic), current,
                                             from_beginning, first, whole)
                    first = False
                    status.assigned = len(current)
                    status.scans += 1
                    next_scan = loop.time() + rescan_seconds
                if not current:
                    await asyncio.sleep(0.2)
                    continue
                batch = await consumer.getmany(timeout_ms=500, max_records=2000)
                for tp, records in batch.items():
                    for rec in records:
                        absorb(window, hub, by_topic[tp.topic], rec.value, status, record,
                               decisions)
                pause.reset()
            except KafkaError as exc:
                if is_fatal(exc):
                    raise
                await _wait(status, pause, "Kafka error while following", exc)
    finally:
        await consumer.stop()

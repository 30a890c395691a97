"""The thin Faust edge of the detector: decode -> DetectProcessor -> emit -> count.

Inputs: the agent-answers topic and the internal tick topic (co-partitioned). The timer
(:mod:`streams.detect.settle_timer`) sends a tick for every cell whose settle window or
retention has run out, to the partition the cell lives in, so that the decision is taken
inside the stream (where table writes belong). Every output is watched: one the broker
refuses ends the worker before its input is committed (:mod:`streams.watchdogs`).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import replace
from typing import Any, cast

import faust

from schemas.skill import Skill
from streams import limits, tracing
from streams.detect.backlog import SettleGate, tick_mark
from streams.detect.batch import Batch
from streams.detect.commit_guard import guard_commits
from streams.detect.partition_batches import PartitionBatches
from streams.detect.processor import DetectProcessor
from streams.detect.settle_timer import SettleTimer
from streams.detect.state import REDELIVERED, CellState, DetectConfig
from streams.detect.store import CellStore
from streams.dlq import dead_letter
from streams.errors import BadRecord, StreamsError
from streams.metrics import Metrics
from streams.settings import Settings
from streams.watchdogs import exit_unhanded, watch_changelog, watch_sent

log = logging.getLogger(__name__)
#: Events per batch, and how long a batch waits to fill (the latency it may add).
BATCH_MAX = 2000
BATCH_WITHIN = 0.02
RAW: dict[str, Any] = {"key_type": bytes, "value_type": bytes,
                       "key_serializer": "raw", "value_serializer": "raw"}


def register_detect(app: faust.App, settings: Settings, skill: Skill, metrics: Metrics,
                    partitions: int) -> DetectProcessor:
    # The edge hands record batches to Faust's plain producer (streams/detect/
    # partition_batches.py), which a transactional (exactly-once) app would bypass.
    guarantee = str(getattr(app.conf.processing_guarantee, "value",
                            app.conf.processing_guarantee))
    if guarantee != "at_least_once":
        raise StreamsError(f"the detect worker runs at least once, not {guarantee}")
    t = settings.topics
    cfg = DetectConfig(settings.expected_agents, settings.settle_seconds,
                 settings.retention_seconds, settings.low_confidence_threshold,
                 settings.expected_agents_by_task)
    channel = app.topic(t.agent_answers, t.detect_ticks, partitions=partitions, **RAW)
    edge = _Edge(app, settings, DetectProcessor(skill, cfg), metrics, partitions)

    @app.agent(channel, name="detect")
    async def detect(stream: faust.StreamT) -> None:
        async for events in cast("faust.Stream[Any]", stream).take_events(BATCH_MAX,
                                                                           BATCH_WITHIN):
            await edge.flush(await edge.take(events))

    @app.timer(interval=edge.timer.every)
    async def settle_ticks() -> None:
        await edge.timer.run(time.time())

    return edge.proc


class _Edge:
    """The detect worker's topics, table, gate and timer, and what it does with a batch."""

    def __init__(self, app: faust.App, settings: Settings, proc: DetectProcessor,
                 metrics: Metrics, partitions: int) -> None:
        t = self.topics = settings.topics
        self.app, self.proc, self.metrics = app, proc, metrics
        ticks = app.topic(t.detect_ticks, partitions=partitions, **RAW)
        self.out_names = {"job": t.judge_jobs, "outcome": t.cell_outcomes}
        self.dlq = app.topic(t.dlq(t.agent_answers), **RAW)
        # key_type/value_type bytes make Faust use the raw codec for the changelog as well.
        self.cells = app.Table("cells", default=None, partitions=partitions, key_type=bytes,
                               value_type=bytes, schema=faust.Schema(**RAW))
        watch_changelog(self.cells)
        self.store = CellStore(self.cells.data, proc.cfg)
        self.gate = gate = SettleGate()
        self.timer = SettleTimer(app, settings, self.store, gate, ticks, metrics)
        app.on_partitions_revoked.connect(self.timer.forget_marks)
        app.on_partitions_assigned.connect(self.timer.forget_marks)
        # no commit past offsets being read again (streams/detect/commit_guard.py); the
        # consumer exists once partitions are assigned, before its first commit
        app.on_partitions_assigned.connect(
            lambda *_, **__: guard_commits(app.consumer, t.agent_answers, gate))

    async def take(self, events: Any) -> Batch:
        """One batch of events applied to the cells (bad records dead-lettered)."""
        batch = Batch(self.proc, self.store.load, bounded)
        gate, timer, metrics = self.gate, self.timer, self.metrics
        ticks_topic = self.topics.detect_ticks
        now = time.time()
        read: dict[str, int] = {}  # records in, by topic: counted once per batch
        for event in events:
            msg = event.message
            source = (msg.topic, msg.partition, msg.offset)
            read[msg.topic] = read.get(msg.topic, 0) + 1
            try:
                if msg.topic == ticks_topic:
                    ready = gate.ready(msg.partition, tick_mark(msg.value))
                    batch.tick(msg.key or b"", source, now, settle_ready=ready)
                    continue
                again = gate.read(msg.partition, msg.offset)
                if again is not None:
                    log.warning("%s[%d]: offsets %d-%d were never delivered to the "
                                "stream; reading them again", msg.topic, msg.partition,
                                again, msg.offset - 1)
                    await timer.read_again(msg.partition, again, now)
                if gate.held(msg.partition, msg.offset):
                    continue  # delivered again after the skipped offsets, in order
                log.debug("cell %s", batch.record(msg.key, msg.value, source, now))
            except BadRecord as exc:
                await _dead_letter(self.dlq, msg, exc.error_type, exc.message)
                metrics.dead_letters.labels("detect", exc.error_type).inc()
            except Exception as exc:  # a bug must not stop the stream; the record is kept
                # type and place only at ERROR: an exception message may quote input (PHI)
                log.error("detect failed on %s[%d]@%d: %s", msg.topic, msg.partition,
                          msg.offset, type(exc).__name__)
                log.debug("detect failure traceback", exc_info=True)
                await _dead_letter(self.dlq, msg, "internal_error", type(exc).__name__)
                metrics.dead_letters.labels("detect", "internal_error").inc()
        for topic, count in read.items():  # a child lookup costs more than the rest of
            metrics.records_in.labels("detect", topic).inc(count)  # a taken event
        return batch

    async def flush(self, batch: Batch) -> None:
        """One detect step, traced (streams.tracing): a batch's outputs and cell states."""
        with tracing.span("detect step", {"judgeflow.worker": "detect",
                                          "judgeflow.outputs": len(batch.emits),
                                          "judgeflow.cells_changed": len(batch.changed)}):
            await self._flush(batch)

    async def _flush(self, batch: Batch) -> None:
        """Send the batch's outputs, then write each changed cell once (to the changelog
        partition of its input), as one record batch per partition
        (:mod:`streams.detect.partition_batches`, which says why the changelog records do
        not go through Faust's table). Faust flushes the producer before it commits the
        batch's offsets."""
        timer, metrics = self.timer, self.metrics
        timer.touched(batch.touched)
        out = PartitionBatches(cast("Any", self.app.producer)._ensure_producer())
        counts: Counter[str] = Counter()
        stored = []
        try:
            for emit, note in batch.emits:
                topic = self.out_names[emit.kind]
                out.add(topic, await out.partition_of(topic, emit.key), emit.key, emit.value)
                counts[topic] += 1
                if emit.kind == "outcome" and note is not REDELIVERED:
                    metrics.cells_decided.labels(emit.label or "unknown").inc()
            # States after the outputs they record: a kill in between more likely loses the
            # state too (the input is read again and decided again, same ids) than leaves
            # a state that says "decided" over outputs that never left.
            changelog = self.cells.changelog_topic.get_topic_name()
            for partition, key, value in self.store.write(batch.changed):
                out.add(changelog, partition, key, value)
                stored.append(key)
            await out.send(watch_sent)
        except Exception as exc:  # any failure here must stop the worker (see exit_unhanded)
            exit_unhanded(exc)
        for key in stored:
            timer.stored(key)
        for topic, n in counts.items():
            metrics.records_out.labels("detect", topic).inc(n)


def bounded(state: CellState) -> tuple[CellState, bytes]:
    """The state to write and its stored bytes, within the changelog's record limit: the
    redelivery history is trimmed to the last decision first; a state still too big is
    refused (``BadRecord``, before the batch takes the step) so its input goes to the DLQ."""
    raw = state.dumps()
    if len(raw) > limits.MAX_CELL_STATE_BYTES and len(state.history) > 1:
        state = replace(state, history=state.history[-1:])
        raw = state.dumps()
    if len(raw) > limits.MAX_CELL_STATE_BYTES:
        raise BadRecord("oversized", f"cell state of {len(raw)} bytes would exceed the limit "
                        f"of {limits.MAX_CELL_STATE_BYTES} bytes")
    return state, raw


async def _dead_letter(dlq: faust.TopicT, msg: Any, error_type: str, message: str) -> None:
    letter = dead_letter(msg, error_type, message, dlq.get_topic_name())
    watch_sent(await dlq.send(key=letter.key, value=letter.value, headers=list(letter.headers)))
    log.warning("dead-lettered %s[%d]@%d: %s", msg.topic, msg.partition, msg.offset, error_type)

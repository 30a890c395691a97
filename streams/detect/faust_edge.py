"""The thin Faust edge of the detector: decode -> DetectProcessor -> emit -> count.

Inputs: the agent-answers topic and the internal tick topic (co-partitioned). A timer sends a
tick for every cell whose settle window or retention has run out, to the partition the cell
lives in, so that the decision is taken inside the stream (where table writes belong).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace
from typing import Any, cast

import faust
from faust.types import TP

from schemas.skill import Skill
from streams import limits
from streams.detect.backlog import (
    SettleGate,
    StallWatch,
    committed_offsets,
    end_offsets,
    tick_mark,
    tick_value,
)
from streams.detect.batch import Batch
from streams.detect.processor import DetectProcessor
from streams.detect.state import CellState, DetectConfig, StepNote
from streams.detect.store import CellStore
from streams.dlq import dead_letter
from streams.errors import BadRecord
from streams.metrics import Metrics
from streams.settings import Settings
from streams.worker_main import ExitCode, exit_now

log = logging.getLogger(__name__)
#: Exit status when an output could not be published (EX_SOFTWARE).
EXIT_UNPUBLISHED = ExitCode.UNPUBLISHED
#: Events per batch, and how long a batch waits to fill (the latency it may add).
BATCH_MAX = 2000
BATCH_WITHIN = 0.02
RAW: dict[str, Any] = {"key_type": bytes, "value_type": bytes,
                       "key_serializer": "raw", "value_serializer": "raw"}


def register_detect(app: faust.App, settings: Settings, skill: Skill, metrics: Metrics,
                    partitions: int) -> DetectProcessor:
    t = settings.topics
    cfg = DetectConfig(settings.expected_agents, settings.settle_seconds,
                 settings.retention_seconds, settings.low_confidence_threshold,
                 settings.expected_agents_by_task)
    proc = DetectProcessor(skill, cfg)
    channel = app.topic(t.agent_answers, t.detect_ticks, partitions=partitions, **RAW)
    ticks = app.topic(t.detect_ticks, partitions=partitions, **RAW)
    out_names = {"job": t.judge_jobs, "outcome": t.cell_outcomes}
    dlq = app.topic(t.dlq(t.agent_answers), **RAW)
    # key_type/value_type bytes make Faust use the raw codec for the changelog as well.
    cells = app.Table("cells", default=None, partitions=partitions, key_type=bytes,
                      value_type=bytes, schema=faust.Schema(**RAW))
    _watch_changelog(cells)
    ticked: dict[bytes, float] = {}
    tick_every = max(0.2, min(settings.settle_seconds / 4, 5.0))
    store = CellStore(cells.data, cfg)
    index = store.index
    # Full rebuilds pick up cells restored from the changelog; they bound how late such a
    # cell can settle after a restart or rebalance to about one settle window.
    rescan_every = max(2 * tick_every, min(settings.settle_seconds, 60.0))
    last_scan = [float("-inf")]
    gate = SettleGate()
    #: The end offset when the timer first found a cell overdue: every tick for the cell
    #: carries it, so reading catches up with it even while new records keep arriving.
    tick_marks: dict[bytes, int] = {}

    #: No record read for this long on a partition with records waiting: the worker is stuck.
    stalls = StallWatch(max(60.0, 10 * settings.kafka.session_timeout_seconds))

    def forget_marks(*_: Any, **__: Any) -> None:
        """An assignment, a revocation or an outage: marks are taken again."""
        gate.reset()
        tick_marks.clear()
        stalls.reset()

    sought: dict[int, float] = {}

    async def read_again(partition: int, offset: int, now: float) -> None:
        """Seek back over offsets the stream skipped. Records read twice change nothing
        (cells remember what they applied); the seek is repeated by the timer while the gap
        is still open (Faust may drop the records it re-fetches if its fetcher was ahead)."""
        sought[partition] = now
        try:
            await app.consumer.seek(TP(t.agent_answers, partition), offset)
        except Exception as exc:  # revoked meanwhile: the next owner reads from the commit
            log.info("%s[%d]: cannot seek back (%s)", t.agent_answers, partition,
                     type(exc).__name__)

    app.on_partitions_revoked.connect(forget_marks)
    app.on_partitions_assigned.connect(forget_marks)

    async def flush(batch: Batch) -> None:
        """Send the batch's outputs back to back, so the producer forms large requests, then
        write each changed cell once (to the changelog partition of its input). Faust
        flushes the producer before it commits the batch's offsets.

        The changelog records go straight to the producer, like the outputs, not through
        ``Table.send_changelog``: that queues them in Faust's producer buffer, whose flush
        (faust-streaming 0.15.3) gives up after 0.1 s without progress and misses the record
        being handed over, so under load Faust could commit input offsets whose cell states
        were still queued, and a kill would then lose the answers they held. Here every
        record is in the producer before the batch's events are acked, and the producer's
        flush before a commit waits for all of them."""
        for key in batch.touched:
            ticked.pop(key, None)
        for emit, note in batch.emits:
            _watch(await app.producer.send(out_names[emit.kind], emit.key, emit.value,
                                           None, None, None))
            metrics.records_out.labels("detect", out_names[emit.kind]).inc()
            if emit.kind == "outcome" and note is not StepNote.REDELIVERED:
                metrics.cells_decided.labels(emit.label or "unknown").inc()
        # States after the outputs they record: a kill in between more likely loses the
        # state too (the input is read again and decided again, same ids) than leaves a
        # state that says "decided" over outputs that never left.
        changelog = cells.changelog_topic.get_topic_name()
        for partition, key, value in store.write(batch.changed):
            _watch(await app.producer.send(changelog, key, value, partition, None, None))
            tick_marks.pop(key, None)

    @app.agent(channel, name="detect")
    async def detect(stream: faust.StreamT) -> None:
        async for events in cast("faust.Stream[Any]", stream).take_events(BATCH_MAX,
                                                                           BATCH_WITHIN):
            batch = Batch(proc, store.load, bounded)
            now = time.time()
            for event in events:
                msg = event.message
                source = (msg.topic, msg.partition, msg.offset)
                metrics.records_in.labels("detect", msg.topic).inc()
                try:
                    if msg.topic == t.detect_ticks:
                        ready = gate.ready(msg.partition, tick_mark(msg.value))
                        batch.tick(msg.key or b"", source, now, settle_ready=ready)
                        continue
                    again = gate.read(msg.partition, msg.offset)
                    if again is not None:
                        log.warning("%s[%d]: offsets %d-%d were never delivered to the "
                                    "stream; reading them again", msg.topic, msg.partition,
                                    again, msg.offset - 1)
                        await read_again(msg.partition, again, now)
                    answer = proc.validate_record(msg.key, msg.value)
                    step = batch.answer(answer, source, now)
                    log.debug("cell %s: %s", step.note, answer.event_id)
                except BadRecord as exc:
                    await _dead_letter(dlq, msg, exc.error_type, exc.message)
                    metrics.dead_letters.labels("detect", exc.error_type).inc()
                except Exception as exc:  # a bug must not stop the stream; the record is kept
                    # type and place only at ERROR: an exception message may quote input (PHI)
                    log.error("detect failed on %s[%d]@%d: %s", msg.topic, msg.partition,
                              msg.offset, type(exc).__name__)
                    log.debug("detect failure traceback", exc_info=True)
                    await _dead_letter(dlq, msg, "internal_error",
                                       type(exc).__name__)
                    metrics.dead_letters.labels("detect", "internal_error").inc()
            await flush(batch)

    @app.timer(interval=tick_every)
    async def settle_ticks() -> None:
        now = time.time()
        if now - last_scan[0] >= rescan_every:
            store.rebuild_index()
            last_scan[0] = now
        for partition, offset in gate.holes().items():
            if now - sought.get(partition, 0.0) > 5 * tick_every:
                log.info("%s[%d]: reading again from %d (still not delivered)",
                         t.agent_answers, partition, offset)
                await read_again(partition, offset, now)
        overdue = index.overdue(now)
        epoch = gate.epoch
        ends = await end_offsets(app.consumer, t.agent_answers, {p for _, p in overdue})
        if ends is None:  # brokers away: marks are taken again once they are back
            forget_marks()
            ends = {}
        # ``epoch``: ends asked for before an assignment that came meanwhile are dropped
        committed = committed_offsets(app.consumer, t.agent_answers)
        gate.resume(ends, committed, epoch=epoch)
        if ends and log.isEnabledFor(logging.DEBUG):
            log.debug("settle: end offsets %s, committed %s", sorted(ends.items()),
                      sorted(committed.items()))
        for key, partition in overdue:
            if (partition in ends and gate.ready(partition)
                    and now - ticked.get(key, 0.0) > 5 * tick_every):
                ticked[key] = now
                mark = tick_marks.setdefault(key, ends[partition])
                await ticks.send(key=key, value=tick_value(mark), partition=partition)
        metrics.pending_cells.set(index.pending())
        await exit_if_stalled(now)

    last_stall_check = [float("-inf")]

    async def exit_if_stalled(now: float) -> None:
        if getattr(app, "in_recovery", False) or getattr(app, "rebalancing", False):
            stalls.reset()  # reading changelogs or rebalancing is not a stall
            return
        if now - last_stall_check[0] < 5.0:  # one end-offsets request every 5 s at most
            return
        last_stall_check[0] = now
        mine = {tp.partition for tp in app.consumer.assignment()
                if tp.topic == t.agent_answers}
        ends = await end_offsets(app.consumer, t.agent_answers, mine)
        if not ends:
            return
        committed = committed_offsets(app.consumer, t.agent_answers)
        behind = {}
        for partition, end in ends.items():
            read = gate.position(partition)
            read = committed.get(partition, 0) if read is None else read
            if end > read:
                behind[partition] = read
        stalled = stalls.check(behind, now)
        if stalled:
            exit_now(f"{t.agent_answers} partition(s) {stalled}: records waiting and none "
                     f"read for {stalls.limit:.0f} s; exiting so that the worker is "
                     "restarted", logger=log)

    return proc


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


def _watch_changelog(table: Any) -> None:
    """Table writes are sends to the changelog: watch them like every other output."""
    send = table.send_changelog

    def send_changelog(*args: Any, **kwargs: Any) -> Any:
        fut = send(*args, **kwargs)
        _watch(fut)
        return fut

    table.send_changelog = send_changelog


def _watch(sent: Any) -> None:
    """``sent`` is Faust's FutureMessage (an asyncio future) for one output."""
    cast("asyncio.Future[Any]", sent).add_done_callback(_exit_if_unpublished)


def _exit_if_unpublished(fut: Any) -> None:
    """An output the broker would not take must not be followed by an offset commit.

    Faust flushes the producer before committing but commits even when a message failed, so
    a failed output would be lost. Exiting at once (the callback runs before the flush
    returns) leaves the input uncommitted; the restarted worker re-sends the same outputs.
    """
    if fut.cancelled() or fut.exception() is None:
        return
    exit_now(f"an output could not be published ({type(fut.exception()).__name__}); exiting "
             "so that its input is redelivered", EXIT_UNPUBLISHED, logger=log)


async def _dead_letter(dlq: faust.TopicT, msg: Any, error_type: str, message: str) -> None:
    letter = dead_letter(msg, error_type, message, dlq.get_topic_name())
    _watch(await dlq.send(key=letter.key, value=letter.value, headers=list(letter.headers)))
    log.warning("dead-lettered %s[%d]@%d: %s", msg.topic, msg.partition, msg.offset, error_type)


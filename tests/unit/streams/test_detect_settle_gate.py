"""Decisions by timeout wait for the backlog (issue 19 item 4): the gate is a condition on
offsets, driven here without a broker, then through the processor as the Faust edge does."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from schemas.skill import Skill
from streams.detect.backlog import SettleGate, tick_mark, tick_value
from streams.detect.batch import Batch
from streams.detect.processor import DetectProcessor
from streams.detect.stall import StallWatch, committed_offsets, end_offsets
from streams.detect.state import CellState, StepNote
from tests.unit.streams.test_processor import CFG, raw, skill  # noqa: F401 (fixture)

Op = tuple[Any, ...]


@pytest.mark.parametrize(("ops", "checks"), [
    # nothing known yet (just started, or the timer has not run since an assignment)
    ([], [(0, 0, False)]),
    # resumed at end 10 with 9 committed: record 9 is the unread backlog
    ([("resume", {0: 10}, {0: 9})], [(0, 0, False)]),
    ([("resume", {0: 10}, {0: 9}), ("read", 0, 9)], [(0, 0, True)]),
    # nothing left to read at resume (committed == end): ready at once
    ([("resume", {0: 10}, {0: 10})], [(0, 0, True), (1, 0, False)]),
    # a tick sent when the end was 30 waits until the stream has read up to 30
    ([("resume", {0: 10}, {0: 10})], [(0, 30, False)]),
    ([("resume", {0: 10}, {0: 10}), ("read_to", 0, 30)], [(0, 30, True)]),
    # a stale tick of a dead worker (mark 5) cannot undercut the resume mark
    ([("resume", {0: 10}, {0: 3}), ("read", 0, 6)], [(0, 5, False)]),
    # a later look at the end does not move a resume mark already taken
    ([("resume", {0: 10}, {0: 10}), ("resume", {0: 50}, {0: 10})], [(0, 0, True)]),
    # a rebalance or an outage forgets everything: marks are taken again
    ([("resume", {0: 10}, {0: 10}), ("reset",)], [(0, 0, False)]),
    ([("resume", {0: 10}, {0: 10}), ("reset",), ("resume", {0: 12}, {0: 10})],
     [(0, 0, False)]),
    # reading is monotonic: an older offset handled again (a redelivery) does not go back
    ([("resume", {0: 10}, {0: 0}), ("read_to", 0, 10), ("read", 0, 2)], [(0, 0, True)]),
    # partitions are independent
    ([("resume", {0: 10, 1: 4}, {0: 10, 1: 0})], [(0, 0, True), (1, 0, False)]),
])
def test_gate(ops: list[Op], checks: list[tuple[int, int, bool]]) -> None:
    gate = SettleGate()
    for op, *args in ops:
        getattr(gate, op)(*args)
    assert [gate.ready(p, mark) for p, mark, _ in checks] == [want for *_, want in checks]


@pytest.mark.parametrize(("value", "mark"), [
    (tick_value(42), 42), (b"", 0), (None, 0), (b"junk", 0), (b"-3", 0)])
def test_tick_marks(value: bytes | None, mark: int) -> None:
    assert tick_mark(value) == mark


class Consumer:
    def __init__(self, ends: dict[int, int] | Exception) -> None:
        self.ends = ends
        self._committed_offset: dict[Any, int | None] = {}

    async def highwaters(self, *tps: Any) -> dict[Any, int]:
        if isinstance(self.ends, Exception):
            raise self.ends
        return {tp: self.ends[tp.partition] for tp in tps}


async def test_end_offsets_and_an_outage() -> None:
    assert await end_offsets(Consumer({0: 5, 1: 7}), "a", {1}) == {1: 7}
    assert await end_offsets(Consumer({}), "a", set()) == {}
    assert await end_offsets(Consumer(ConnectionError("gone")), "a", {0}) is None


def test_committed_offsets_of_one_topic() -> None:
    from faust.types import TP

    c = Consumer({})
    c._committed_offset = {TP("a", 0): 4, TP("a", 1): None, TP("ticks", 0): 9}
    assert committed_offsets(c, "a") == {0: 4}


def test_faust_still_keeps_committed_offsets_where_we_read_them() -> None:
    """The gate's committed offsets come from a private Faust field: an upgrade that drops
    it must fail here, not silently make idle partitions wait forever."""
    from faust.transport.consumer import Consumer as FaustConsumer

    assert "_committed_offset" in FaustConsumer.__annotations__


def _first_answers(proc: DetectProcessor) -> tuple[bytes, CellState]:
    step = proc.on_answer(proc.validate(raw("default", True, event="e1")), ("answers", 0, 0),
                          None, 0.0)
    assert step.state is not None
    return b"t|P1|dm_dx", step.state


def test_a_stale_tick_before_the_backlog_decides_nothing(skill: Skill) -> None:  # noqa: F811
    """The SIGKILL flake, broker-less: the worker restarts long after the settle window with
    the cell's first answer restored and the second unread at offset 1. A tick left by the
    dead worker is handled first. Ungated (the old code) it decides ``agent_missing``; gated
    it decides nothing, and once the backlog is read the cell is an agreement."""
    proc = DetectProcessor(skill, CFG)
    key, state = _first_answers(proc)
    stored = {key: state}
    late = CFG.settle_seconds + 60.0
    old = proc.on_tick(state, ("ticks", 0, 0), late)
    assert orjson.loads(old.emits[-1].value)["outcome"] == "agent_missing"  # the bug

    gate = SettleGate()
    gate.resume({0: 2}, {0: 1})  # end 2; record 0 was handled by the dead worker
    batch = Batch(proc, stored.get)
    step = batch.tick(key, ("ticks", 0, 0), late, settle_ready=gate.ready(0, tick_mark(b"")))
    assert step.note is StepNote.TICK_EARLY and step.emits == () and not step.changed
    gate.read(0, 1)
    step = batch.answer(proc.validate(raw("skeptical", True, event="e2")), ("answers", 0, 1),
                        late)
    assert orjson.loads(step.emits[-1].value)["outcome"] == "agreement"


def test_an_ungated_tick_still_purges_and_resends(skill: Skill) -> None:  # noqa: F811
    """Only the settle decision waits: retention purges and re-sends of a redelivered tick's
    outputs need no backlog."""
    proc = DetectProcessor(skill, CFG)
    _, state = _first_answers(proc)
    settled = proc.on_tick(state, ("ticks", 0, 7), CFG.settle_seconds)
    assert settled.state is not None and settled.emits
    again = proc.on_tick(settled.state, ("ticks", 0, 7), 1e9, settle_ready=False)
    assert again.note is StepNote.REDELIVERED and again.emits == settled.emits
    purged = proc.on_tick(settled.state, ("ticks", 0, 8), 1e9, settle_ready=False)
    assert purged.note is StepNote.PURGED


def test_skipped_offsets_are_read_again_before_any_timeout() -> None:
    """A restarted worker's stream once went from offset 37 to 39 (Faust never delivered 38,
    an answer): the gate asks for 38 again and holds the partition's timeouts until the
    re-read reaches the gap."""
    gate = SettleGate()
    gate.resume({0: 60}, {0: 34})
    assert [gate.read(0, o) for o in (34, 35, 36, 37)] == [None] * 4
    assert gate.read(0, 39) == 38          # the gap: read again from 38
    assert gate.holes() == {0: 38}
    for o in range(40, 60):
        assert gate.read(0, o) is None
    assert not gate.ready(0)                # a hole, and 39-59 are held, not read
    assert all(gate.held(0, o) for o in range(39, 60))
    assert gate.read(0, 38) is None         # the seek delivered 38: filled
    assert gate.holes() == {} and not gate.held(0, 38)
    for o in range(39, 60):                 # then the held records again, in order
        assert gate.read(0, o) is None and not gate.held(0, o)
    assert gate.ready(0)


def test_a_gap_without_records_is_accepted_after_one_re_read() -> None:
    """Offsets that hold no record (a transaction marker): the re-read starts after them,
    and the same gap seen again is accepted."""
    gate = SettleGate()
    gate.resume({0: 12}, {0: 0})
    for o in range(0, 10):
        gate.read(0, o)
    assert gate.read(0, 11) == 10
    assert gate.read(0, 11) is None and gate.holes() == {}   # re-read came back at 11
    assert gate.ready(0)
    gate.read(0, 9)  # an older record read again changes nothing
    assert gate.read(0, 11) is None  # the same gap again: accepted, not sought again


def test_re_read_gaps_are_kept_across_resets_until_the_commit_passes_them() -> None:
    """A gap read again once is remembered after a rebalance (re-read from the commit, it
    comes back and is accepted), and forgotten once the group committed past it."""
    gate = SettleGate()
    gate.resume({0: 12}, {0: 0})
    gate.read(0, 4)
    assert gate.read(0, 7) == 5
    gate.reset()                      # a rebalance: read again from the commit (4)
    gate.read(0, 4)
    assert gate.read(0, 7) is None    # the same gap: accepted, no second seek
    gate.resume({0: 12}, {0: 5})      # committed at 5: the gap starting at 5 may come back
    gate.reset()
    gate.read(0, 4)
    assert gate.read(0, 7) is None
    gate.resume({0: 12}, {0: 6})      # committed past the gap's start: forgotten
    gate.reset()
    gate.read(0, 4)                   # (only a seek below the commit could deliver this)
    assert gate.read(0, 7) == 5


def test_re_read_gaps_remembered_are_capped_oldest_first() -> None:
    """A partition whose commit never moves (a stuck group) still cannot grow the memory of
    gaps without bound: past MAX_RETRIED the oldest is forgotten (read again once more)."""
    from streams.detect.backlog import MAX_RETRIED

    gate = SettleGate()
    gate.read(0, 0)
    for n in range(MAX_RETRIED + 5):  # a gap at every odd offset: 1, 3, 5, ...
        assert gate.read(0, 2 * n + 2) == 2 * n + 1
        assert gate.read(0, 2 * n + 2) is None  # the re-read: the gap holds no record
    assert len(gate._retried) == MAX_RETRIED
    newest = 2 * (MAX_RETRIED + 4) + 1
    gate.reset()
    gate.read(0, newest - 1)
    assert gate.read(0, newest + 1) is None   # still remembered: accepted
    gate.reset()
    gate.read(0, 0)
    assert gate.read(0, 2) == 1               # the oldest was forgotten: sought once more


def test_a_reset_forgets_holes() -> None:
    gate = SettleGate()
    gate.resume({0: 10}, {0: 0})
    gate.read(0, 0)
    assert gate.read(0, 5) == 1
    gate.reset()
    assert gate.holes() == {}


def test_gaps_are_between_delivered_records_only() -> None:
    """Faust may signal an assignment after its stream started reading (the gate resets
    then), and the committed offset it resumes from lags behind: neither is a gap."""
    gate = SettleGate()
    gate.resume({0: 200}, {0: 51})
    assert gate.read(0, 183) is None   # first record since the reset: nothing to compare
    assert gate.read(0, 184) is None and gate.ready(0) is False
    assert gate.read(0, 186) == 185


def test_stall_watch() -> None:
    watch = StallWatch(limit=60.0)
    assert watch.check({0: 10, 1: 5}, 0.0) == []
    assert watch.check({0: 10, 1: 7}, 30.0) == []        # partition 1 is being read
    assert watch.check({0: 10, 1: 9}, 61.0) == [0]       # partition 0: nothing for 61 s
    assert watch.check({1: 9}, 62.0) == []               # 0 caught up (nothing waiting)
    assert watch.check({0: 10, 1: 9}, 100.0) == []       # 0 waiting again: a new clock
    watch.reset()
    assert watch.check({1: 9}, 200.0) == []              # a rebalance restarts the clocks


def test_records_past_a_gap_wait_for_it_so_a_cell_sees_its_answers_in_order(
        skill: Skill) -> None:  # noqa: F811
    """The SIGKILL test's failure on Apache Kafka (a disagreement job never sent): after the
    restart the stream delivered offset 0, skipped 1 and delivered 2, then the seek back
    delivered 1 and 2 again. Handling 2 at once (the old edge) applied the default agent's
    re-run before the skeptical answer, so the disagreement between the first two answers,
    and its job, never happened. Held until the gap is read, the cell goes through the same
    decisions as in order."""
    proc = DetectProcessor(skill, CFG)
    records = {0: raw("default", True, event="a1", at="2026-01-01T00:00:00Z"),
               1: raw("skeptical", False, event="b1", at="2026-01-01T00:00:01Z"),
               2: raw("default", False, event="a2", run="r2", at="2026-01-01T01:00:00Z")}

    def decisions(delivered: list[int]) -> list[tuple[str, str]]:
        gate, stored = SettleGate(), dict[bytes, CellState]()
        gate.resume({0: 3}, {0: 0})
        out: list[tuple[str, str]] = []
        for offset in delivered:  # what the stream delivered, in this order
            gate.read(0, offset)  # (the seek it may ask for is the rest of ``delivered``)
            if gate.held(0, offset):
                continue
            batch = Batch(proc, stored.get)
            step = batch.answer(proc.validate(records[offset]), ("answers", 0, offset), 0.0)
            stored.update({k: c.state for k, c in batch.changed.items() if c.state})
            for e in step.emits:
                rec = orjson.loads(e.value)
                out.append((str(e.kind), str(rec.get("kind") or rec["outcome"])))
        return out

    in_order = decisions([0, 1, 2])
    assert ("job", "disagreement") in in_order and in_order[-1] == ("outcome", "agreement")
    assert decisions([0, 2, 1, 2]) == in_order

"""Issue 25 item 9 (a), forced with Faust's own commit bookkeeping (a real faust-streaming
consumer, never started) and the detect edge's real gap detector (SettleGate): Faust's
fetcher goes from offset 100 to 110 of an input partition, so Faust registers 101-109 as a
gap (acknowledged); the stream delivers 110 right after 100, so the edge holds 110 and
reads 101 on again. What may Faust commit meanwhile?

Shown: Faust alone commits 111, past nine answers the stream never handled and past the
held record (a kill then loses them: the restart reads from 111). With the edge's guard
(streams/detect/commit_guard.py) nothing is committed until the gap is read again, then
everything is; a gap that comes back empty (transaction markers) is accepted and committed
past as before."""

from __future__ import annotations

from typing import Any

import pytest
from faust.transport.consumer import Consumer as FaustConsumer
from faust.types import TP, Message

from streams.app import base_app
from streams.detect.backlog import SettleGate
from streams.detect.commit_guard import guard_commits
from tests.helpers import test_settings

TOPIC = "answers"
PART = TP(TOPIC, 0)


def consumer() -> Any:
    app = base_app(test_settings("127.0.0.1:1"), "g", 3)
    c = app.consumer
    # what Faust's conductor records for the detect agent's channel (acks enabled)
    app.topics._acking_topics.add(TOPIC)
    c._committed_offset[PART] = 100  # the group's commit when the partition was assigned
    return c


def message(offset: int) -> Message:
    return Message(TOPIC, 0, offset, 0.0, 0, None, b"cell", b"{}", None)


async def fetcher_skips_101_to_109(c: Any, gate: SettleGate) -> None:
    """Faust's fetcher read 100, then 110 (``_drain_messages``: ``_add_gap(tp, r + 1, offset)``);
    the stream delivered both in one batch to the edge, which acked both at its end."""
    await c._add_gap(PART, 101, 110)
    assert gate.read(0, 100) is None
    assert gate.read(0, 110) == 101 and gate.held(0, 110)  # held; 101 is sought again
    for offset in (100, 110):
        c.ack(message(offset))


def committable(c: Any) -> dict[TP, int]:
    """What Faust's next commit would send (the step of ``Consumer.commit``)."""
    return dict(c._filter_committable_offsets({PART}))


async def test_faust_alone_commits_past_offsets_the_stream_never_handled() -> None:
    """The suspected window is real: the proof, and why the guard exists."""
    c, gate = consumer(), SettleGate()
    await fetcher_skips_101_to_109(c, gate)
    assert gate.holes() == {0: 101}
    assert committable(c) == {PART: 111}


async def test_no_commit_passes_a_gap_being_read_again() -> None:
    c, gate = consumer(), SettleGate()
    guard_commits(c, TOPIC, gate)
    await fetcher_skips_101_to_109(c, gate)
    assert committable(c) == {}, "committed past 101-110, which the stream never handled"
    # the seek back delivers 101..110; the edge handles them, the stream acks them
    for offset in range(101, 111):
        assert gate.read(0, offset) is None and not gate.held(0, offset)
        c.ack(message(offset))
    assert gate.holes() == {}
    assert committable(c) == {PART: 111}


async def test_a_gap_that_comes_back_empty_is_committed_past() -> None:
    """Offsets that hold no record (transaction markers): the re-read delivers 110 again
    first; the gap is accepted and Faust's own gap bookkeeping, kept, covers it."""
    c, gate = consumer(), SettleGate()
    guard_commits(c, TOPIC, gate)
    await fetcher_skips_101_to_109(c, gate)
    assert committable(c) == {}
    assert gate.read(0, 110) is None and gate.holes() == {}
    assert committable(c) == {PART: 111}


@pytest.mark.parametrize("other", [TP("ticks", 0), TP(TOPIC, 1)])
async def test_other_partitions_commit_as_before(other: TP) -> None:
    c, gate = consumer(), SettleGate()
    guard_commits(c, TOPIC, gate)
    guard_commits(c, TOPIC, gate)  # installed once per consumer
    await fetcher_skips_101_to_109(c, gate)
    c.app.topics._acking_topics.add(other.topic)
    c._committed_offset[other] = 5
    c.ack(Message(other.topic, other.partition, 5, 0.0, 0, None, b"k", b"v", None))
    assert dict(c._filter_committable_offsets({PART, other})) == {other: 6}


def test_faust_still_computes_commits_where_the_guard_wraps_it() -> None:
    assert callable(getattr(FaustConsumer, "_new_offset", None))
    assert callable(getattr(FaustConsumer, "_filter_committable_offsets", None))


async def test_the_detect_edge_guards_its_consumer_once_partitions_are_assigned() -> None:
    from schemas.skill import load_skill
    from streams.detect.faust_edge import register_detect
    from streams.metrics import Metrics

    s = test_settings("127.0.0.1:1")
    app = base_app(s, "g", 3)
    register_detect(app, s, load_skill(s.skill_dir), Metrics.create(), 3)
    await app.on_partitions_assigned.send(set())
    gap_tp = TP(s.topics.agent_answers, 0)
    c = app.consumer
    app.topics._acking_topics.add(gap_tp.topic)
    c._committed_offset[gap_tp] = 100
    await c._add_gap(gap_tp, 101, 110)  # no hole in the edge's gate: Faust's gap counts
    c.ack(Message(gap_tp.topic, 0, 100, 0.0, 0, None, b"k", b"v", None))
    c.ack(Message(gap_tp.topic, 0, 110, 0.0, 0, None, b"k", b"v", None))
    assert getattr(c, "_judgeflow_commit_guard", False)
    assert dict(c._filter_committable_offsets({gap_tp})) == {gap_tp: 111}

"""A cell state too large for the changelog is refused when its event is applied: the batch
takes nothing from that event (no state, no output), so the edge dead-letters exactly it."""

from __future__ import annotations

import pytest

from schemas.skill import Skill
from streams.detect import faust_edge
from streams.detect.batch import Batch
from streams.detect.processor import DetectProcessor
from streams.detect.state import CellState
from streams.errors import BadRecord
from tests.unit.streams.test_processor import CFG, raw, skill  # noqa: F401 (fixture)


def refuse(state: CellState) -> tuple[CellState, bytes]:
    raise BadRecord("oversized", "cell state too large")


def test_a_refused_state_leaves_the_batch_untouched(skill: Skill) -> None:  # noqa: F811
    proc = DetectProcessor(skill, CFG)
    batch = Batch(proc, lambda key: None, refuse)
    with pytest.raises(BadRecord):
        batch.answer(proc.validate(raw("default", True, event="e1")), ("answers", 0, 0), 0.0)
    assert batch.changed == {} and batch.emits == [] and batch.touched == set()


def test_a_kept_state_is_stored_as_the_bytes_the_bound_returned(skill: Skill) -> None:  # noqa: F811
    proc = DetectProcessor(skill, CFG)
    batch = Batch(proc, lambda key: None, faust_edge.bounded)
    batch.answer(proc.validate(raw("default", True, event="e1")), ("answers", 3, 0), 0.0)
    (change,) = batch.changed.values()
    assert change.partition == 3 and change.state is not None
    assert CellState.loads(change.raw) == change.state


def test_bounded_trims_history_then_refuses(monkeypatch: pytest.MonkeyPatch,
                                            skill: Skill) -> None:  # noqa: F811
    proc = DetectProcessor(skill, CFG)
    batch = Batch(proc, lambda key: None)
    batch.answer(proc.validate(raw("default", True, event="e1")), ("answers", 0, 0), 0.0)
    (change,) = batch.changed.values()
    assert change.state is not None
    monkeypatch.setattr(faust_edge.limits, "MAX_CELL_STATE_BYTES", 1)
    with pytest.raises(BadRecord) as err:
        faust_edge.bounded(change.state)
    assert err.value.error_type == "oversized"

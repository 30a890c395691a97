"""The detector's state machine and processor, driven record by record (no broker)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from schemas.chart_review import AgentAnswer
from schemas.skill import Skill, load_skill
from streams import limits
from streams.detect.processor import DetectProcessor, Step
from streams.detect.state import CellState, DetectConfig
from streams.errors import BadRecord

CRITERION = """---
field_id: dm_dx
prompt: Does the patient have type 2 diabetes?
answer_schema:
  type: boolean
  enum: [true, false, no_info]
---
A documented diagnosis.
"""
CFG = DetectConfig(("default", "skeptical"), settle_seconds=30, retention_seconds=100,
             low_confidence_threshold=0.5)
TOPIC = "answers"


@pytest.fixture()
def skill(tmp_path: Path) -> Skill:
    crit = tmp_path / "references" / "criteria"
    crit.mkdir(parents=True)
    (crit / "dm_dx.md").write_text(CRITERION)
    return load_skill(tmp_path)


def raw(agent: str, answer: Any, *, event: str, at: str = "2026-01-01T00:00:00Z",
        run: str = "r1", confidence: Any = "high", field: str = "dm_dx") -> bytes:
    return orjson.dumps({"event_id": event, "run_id": run, "task_id": "t", "patient_id": "P1",
                         "field_id": field, "agent_id": agent, "answer": answer,
                         "confidence": confidence, "emitted_at": at})


class Cell:
    """Feeds records through a processor and keeps the state like the Faust table would."""

    def __init__(self, skill: Skill) -> None:
        self.proc = DetectProcessor(skill, CFG)
        self.state: CellState | None = None
        self.offset = 0
        self.emitted: list[tuple[str, dict[str, Any]]] = []

    def _apply(self, step: Step) -> Step:
        if step.changed:
            self.state = step.state
        self.emitted += [(e.kind, orjson.loads(e.value)) for e in step.emits]
        return step

    def answer(self, value: bytes, now: float = 0.0, offset: int | None = None) -> Step:
        off = self.offset if offset is None else offset
        self.offset = max(self.offset, off + 1)
        rec: AgentAnswer = self.proc.validate(value)
        return self._apply(self.proc.on_answer(rec, (TOPIC, 0, off), self.state, now))

    def tick(self, now: float, offset: int = 1000) -> Step:
        return self._apply(self.proc.on_tick(self.state, ("ticks", 0, offset), now))

    def jobs(self) -> list[dict[str, Any]]:
        return [v for k, v in self.emitted if k == "job"]

    def outcomes(self) -> list[dict[str, Any]]:
        return [v for k, v in self.emitted if k == "outcome"]


def test_decides_when_every_agent_answered(skill: Skill) -> None:
    cell = Cell(skill)
    assert cell.answer(raw("default", True, event="e1")).emits == ()
    cell.answer(raw("skeptical", False, event="e2"))
    assert [j["kind"] for j in cell.jobs()] == ["disagreement"]
    job = cell.jobs()[0]
    assert [a["agent_id"] for a in job["answers"]] == ["default", "skeptical"]
    assert job["normalized"] == [True, False]
    assert job["source"] == {"topic": TOPIC, "partition": 0, "offset": 1}
    assert cell.outcomes()[0]["job_id"] == job["job_id"]


def test_duplicate_event_is_dropped(skill: Skill) -> None:
    cell = Cell(skill)
    cell.answer(raw("default", True, event="e1"))
    step = cell.answer(raw("default", True, event="e1"))
    assert step.note == "duplicate" and step.emits == ()
    cell.answer(raw("skeptical", True, event="e2"))
    step = cell.answer(raw("skeptical", True, event="e2"))
    assert step.note == "duplicate"
    assert [o["outcome"] for o in cell.outcomes()] == ["agreement"]


def test_superseding_rerun_redecides_and_changes_job(skill: Skill) -> None:
    cell = Cell(skill)
    cell.answer(raw("default", True, event="e1"))
    cell.answer(raw("skeptical", False, event="e2"))
    cell.answer(raw("skeptical", True, event="e3", run="r2", at="2026-01-02T00:00:00Z"))
    assert [o["outcome"] for o in cell.outcomes()] == ["disagreement", "agreement"]
    assert len(cell.jobs()) == 1


def test_identical_rerun_emits_nothing(skill: Skill) -> None:
    cell = Cell(skill)
    cell.answer(raw("default", True, event="e1"))
    cell.answer(raw("skeptical", False, event="e2"))
    step = cell.answer(raw("skeptical", False, event="e3", run="r2", at="2026-01-02T00:00:00Z"))
    assert step.emits == () and step.note == "unchanged"
    assert len(cell.jobs()) == 1 and len(cell.outcomes()) == 1


def test_stale_older_run_is_ignored(skill: Skill) -> None:
    cell = Cell(skill)
    cell.answer(raw("default", True, event="e1", run="r2", at="2026-01-02T00:00:00Z"))
    step = cell.answer(raw("default", False, event="e0", run="r1", at="2026-01-01T00:00:00Z"))
    assert step.note == "stale"
    cell.answer(raw("skeptical", True, event="e2"))
    assert [o["outcome"] for o in cell.outcomes()] == ["agreement"]


def test_settle_window_decides_with_what_it_has(skill: Skill) -> None:
    cell = Cell(skill)
    cell.answer(raw("default", True, event="e1", confidence="low"), now=0.0)
    assert cell.tick(now=10.0).note == "tick-early"
    cell.tick(now=31.0)
    assert cell.outcomes()[0]["outcome"] == "agent_missing"
    assert cell.outcomes()[0]["settled_by_timeout"] is True
    assert cell.outcomes()[0]["missing_agents"] == ["skeptical"]
    assert [j["kind"] for j in cell.jobs()] == ["low_confidence"]
    # the late agent re-decides the cell with both answers
    cell.answer(raw("skeptical", True, event="e2"), now=40.0)
    assert [o["outcome"] for o in cell.outcomes()] == ["agent_missing", "low_confidence"]
    assert cell.jobs()[0]["job_id"] != cell.jobs()[1]["job_id"]


def test_decided_cell_is_purged_after_retention(skill: Skill) -> None:
    cell = Cell(skill)
    cell.answer(raw("default", True, event="e1"), now=0.0)
    cell.answer(raw("skeptical", True, event="e2"), now=1.0)
    assert cell.tick(now=50.0).note == "tick-early"
    step = cell.tick(now=101.5)
    assert step.note == "purged" and step.state is None and cell.state is None


def test_redelivered_trigger_resends_same_outputs(skill: Skill) -> None:
    """A worker killed after storing state but before committing: same ids, not lost."""
    cell = Cell(skill)
    cell.answer(raw("default", True, event="e1"), offset=0)
    cell.answer(raw("skeptical", "yes", event="e2"), offset=1)
    first = list(cell.emitted)
    step = cell.answer(raw("skeptical", "yes", event="e2"), offset=1)  # same offset again
    assert step.note == "redelivered"
    assert cell.emitted[len(first):] == first  # identical records, identical ids


def test_state_round_trips_through_bytes(skill: Skill) -> None:
    cell = Cell(skill)
    cell.answer(raw("default", True, event="e1"))
    cell.answer(raw("skeptical", False, event="e2"))
    assert cell.state is not None
    assert CellState.loads(cell.state.dumps()) == cell.state


@pytest.mark.parametrize(("value", "error_type"), [
    (b"not json", "invalid_json"),
    (b"[1, 2]", "invalid_json"),
    (b'{"event_id": "x"}', "schema_error"),
    (raw("default", True, event="e", confidence=1.7), "schema_error"),
    (raw("default", True, event="e").replace(b'"P1"', b'"../etc"'), "schema_error"),
    (raw("default", True, event="e", field="nope"), "unknown_criterion"),
])
def test_bad_records_are_typed(skill: Skill, value: bytes, error_type: str) -> None:
    with pytest.raises(BadRecord) as err:
        DetectProcessor(skill, CFG).validate(value)
    assert err.value.error_type == error_type
    assert "../etc" not in err.value.message  # never echo input values


def test_expected_agents_can_differ_per_task(skill: Skill) -> None:
    cfg = DetectConfig(("default", "skeptical"), 30, 100, 0.5,
                       {"t": ("default", "skeptical", "third")})
    proc = DetectProcessor(skill, cfg)
    state = None
    for offset, agent in enumerate(("default", "skeptical")):
        step = proc.on_answer(proc.validate(raw(agent, True, event=agent)), (TOPIC, 0, offset),
                              state, 0.0)
        state = step.state
        assert step.emits == ()  # "third" is still expected for task "t"
    step = proc.on_answer(proc.validate(raw("third", False, event="x")), (TOPIC, 0, 2), state, 0.0)
    outcome = orjson.loads(step.emits[-1].value)
    assert outcome["outcome"] == "disagreement"
    assert outcome["agents"] == ["default", "skeptical", "third"]


def test_due_index_tracks_settle_and_purge_times(skill: Skill) -> None:
    from streams.detect.state import DueIndex

    cell = Cell(skill)
    cell.answer(raw("default", True, event="e1"), now=100.0)
    index = DueIndex(CFG)
    assert cell.state is not None
    index.note(b"k", cell.state)
    assert index.pending() == 1
    assert index.overdue(129.0) == [] and index.overdue(130.0) == [(b"k", 0)]
    cell.answer(raw("skeptical", True, event="e2"), now=110.0)
    assert cell.state is not None
    index.note(b"k", cell.state)  # decided at 110: next due is the purge at 210
    assert index.pending() == 0
    assert index.overdue(209.0) == [] and index.overdue(210.0) == [(b"k", 0)]
    index.note(b"other", cell.state)
    assert len(index) == 2
    index.note(b"k", None)
    assert len(index) == 1


def test_a_dropped_duplicate_never_replaces_the_stored_answer(skill: Skill) -> None:
    """Same event id, different content: the duplicate is dropped and the decision still
    uses the answer that was first stored under that id."""
    cell = Cell(skill)
    cell.answer(raw("default", True, event="e1"))
    cell.answer(raw("default", False, event="e1"))  # a reused id with other content
    cell.answer(raw("skeptical", True, event="e2"))
    assert [o["outcome"] for o in cell.outcomes()] == ["agreement"]


@pytest.mark.parametrize(("key", "error_type"), [
    (b"t|P1|dm_dx", None),  # the cell key
    (None, "key_mismatch"),  # no key: the partitioner would scatter the cell
    (b"t|P2|dm_dx", "key_mismatch"),  # another patient's cell
    (b"t|P1|dm_dx ", "key_mismatch"),
    (b"T|P1|dm_dx", "key_mismatch"),  # keys are compared exactly
    (b"", "key_mismatch"),
])
def test_an_answer_must_be_keyed_by_its_cell(skill: Skill, key: bytes | None,
                                             error_type: str | None) -> None:
    proc = DetectProcessor(skill, CFG)
    value = raw("default", True, event="e")
    if error_type is None:
        assert proc.validate_record(key, value).key == "t|P1|dm_dx"
        return
    with pytest.raises(BadRecord) as err:
        proc.validate_record(key, value)
    assert err.value.error_type == error_type
    assert "P1" not in err.value.message and "P2" not in err.value.message  # no ids (PHI)


def test_a_bad_value_is_reported_before_its_key(skill: Skill) -> None:
    with pytest.raises(BadRecord) as err:
        DetectProcessor(skill, CFG).validate_record(None, b"not json")
    assert err.value.error_type == "invalid_json"


# The free-text limits: an answer the model accepts but over a limit is refused as
# ``oversized``, and the dead letter names the field.

def record(**extra: Any) -> dict[str, Any]:
    return {"event_id": "e1", "run_id": "r1", "task_id": "t", "patient_id": "P1",
            "field_id": "dm_dx", "agent_id": "default", "answer": True,
            "emitted_at": "2026-01-01T00:00:00Z", **extra}


@pytest.mark.parametrize(("extra", "field"), [
    ({"rationale": "x" * (limits.MAX_RATIONALE_CHARS + 1)}, "rationale"),
    ({"low_confidence_reason": "x" * (limits.MAX_REASON_CHARS + 1)}, "low_confidence_reason"),
    ({"evidence": [{"note_id": "n1", "quote": "q" * (limits.MAX_QUOTE_CHARS + 1)}]},
     "evidence[0].quote"),
    ({"evidence": [{"note_id": "n1", "quote": "q"}] * (limits.MAX_EVIDENCE_ITEMS + 1)},
     "evidence items"),
])
def test_text_over_a_limit_is_refused(skill: Skill, extra: dict[str, Any], field: str) -> None:
    data = record(**extra)
    AgentAnswer.model_validate(data)  # the model takes it: the limits must apply
    with pytest.raises(BadRecord) as err:
        DetectProcessor(skill, CFG).validate(orjson.dumps(data))
    assert err.value.error_type == "oversized"
    assert field in err.value.message


def test_text_at_the_limits_is_accepted(skill: Skill) -> None:
    data = record(rationale="x" * limits.MAX_RATIONALE_CHARS,
                  evidence=[{"note_id": "n1", "quote": "q" * limits.MAX_QUOTE_CHARS}])
    assert DetectProcessor(skill, CFG).validate(orjson.dumps(data)).key == "t|P1|dm_dx"

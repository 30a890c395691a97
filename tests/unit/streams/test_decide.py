"""Table-driven tests of the per-cell decision (no broker)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from schemas.chart_review import AgentAnswer
from schemas.skill import AnswerSchema
from streams.detect.decide import decide

BOOL = AnswerSchema(type="boolean", enum=(True, False, "no_info"))
AGENTS = ("default", "skeptical")


def ans(agent: str, answer: Any, confidence: Any = "high", event: str | None = None,
        run: str = "r1", at: str = "2026-01-01T00:00:00Z") -> AgentAnswer:
    return AgentAnswer(event_id=event or f"{agent}-{run}", run_id=run, task_id="t",
                       patient_id="P1", field_id="f", agent_id=agent, answer=answer,
                       confidence=confidence, emitted_at=at)


@pytest.mark.parametrize(("a", "b", "outcome", "kinds"), [
    (ans("default", True), ans("skeptical", True), "agreement", ()),
    (ans("default", True), ans("skeptical", False), "disagreement", ("disagreement",)),
    (ans("default", True), ans("skeptical", "yes"), "type_drift", ("type_drift",)),
    (ans("default", None), ans("skeptical", "no_info"), "type_drift", ("type_drift",)),
    (ans("default", True), ans("skeptical", True, "low"), "low_confidence", ("low_confidence",)),
    (ans("default", True, 0.3), ans("skeptical", True), "low_confidence", ("low_confidence",)),
    (ans("default", True, 0.5), ans("skeptical", True), "agreement", ()),
    (ans("default", True, "low"), ans("skeptical", False), "disagreement",
     ("disagreement", "low_confidence")),
    (ans("default", True, "low"), ans("skeptical", "yes"), "type_drift",
     ("type_drift", "low_confidence")),
    (ans("default", "maybe"), ans("skeptical", "maybe"), "agreement", ()),
    (ans("default", "maybe"), ans("skeptical", True), "disagreement", ("disagreement",)),
])
def test_two_agents(a: AgentAnswer, b: AgentAnswer, outcome: str, kinds: tuple[str, ...]) -> None:
    d = decide([b, a], BOOL, AGENTS, 0.5)  # order of arrival must not matter
    assert d.outcome == outcome
    assert d.kinds_applicable == kinds
    assert d.job_kind == (kinds[0] if kinds else None)
    assert [n.answer.agent_id for n in d.answers] == ["default", "skeptical"]  # agent A first
    assert len(d.reasons) >= len(kinds)


@pytest.mark.parametrize(("lone", "job"), [
    (ans("default", True), None),
    (ans("skeptical", True, "low"), "low_confidence"),
    (ans("skeptical", False, 0.2), "low_confidence"),
])
def test_agent_missing(lone: AgentAnswer, job: str | None) -> None:
    d = decide([lone], BOOL, AGENTS, 0.5)
    assert d.outcome == "agent_missing"
    assert d.job_kind == job
    assert d.missing_agents == tuple(a for a in AGENTS if a != lone.agent_id)
    assert any("settle window" in r for r in d.reasons)


def test_job_id_depends_only_on_decision_inputs() -> None:
    first = decide([ans("default", True), ans("skeptical", False)], BOOL, AGENTS, 0.5)
    rerun = decide([ans("default", True, event="other", run="r9"), ans("skeptical", False)],
                   BOOL, AGENTS, 0.5)
    changed = decide([ans("default", True), ans("skeptical", "maybe")], BOOL, AGENTS, 0.5)
    assert first.job_id == rerun.job_id
    assert first.job_id != changed.job_id
    assert first.job_id is not None and len(first.job_id) == 32


def test_job_ids_differ_between_cells() -> None:
    a = decide([ans("default", True), ans("skeptical", False)], BOOL, AGENTS, 0.5)
    other = ans("default", True).model_copy(update={"patient_id": "P2"})
    b = decide([other, ans("skeptical", False).model_copy(update={"patient_id": "P2"})],
               BOOL, AGENTS, 0.5)
    assert a.job_id != b.job_id


@pytest.mark.parametrize("raws", [(True, 1, 1.0), (0.0, -0.0, 0), ("yes", "Yes"), (None, "")])
def test_remembered_scalar_forms_keep_types_and_spellings_apart(raws: tuple[Any, ...]) -> None:
    """Scalar answers' normal forms are cached: equal-comparing values of other types or
    spellings (True == 1, -0.0 == 0.0) must not share one."""
    from streams.detect.decide import _normal_form, normalize_answer

    schema = AnswerSchema(type="number")
    for _ in range(2):  # the second round is served from the cache
        for raw in raws:
            n = normalize_answer(ans("default", raw), schema, 0.5)
            assert (n.canonical, n.signature, n.canonical_json, n.json_value) == _normal_form(
                raw, schema)


@pytest.mark.parametrize("raw", [["x", "y"], "not a number"])
def test_a_decision_s_list_or_invalid_value_is_its_own(raw: Any) -> None:
    """Normal forms are cached per raw answer; the JSON values the records carry must not be
    shared between decisions (a record changed in place would change later ones)."""
    schema = AnswerSchema(type="list") if isinstance(raw, list) else AnswerSchema(type="number")
    first = decide([ans("default", raw), ans("skeptical", raw)], schema, AGENTS, 0.5)
    value = first.answers[0].json_value
    want = copy.deepcopy(value)
    if isinstance(value, list):
        value.append("POISON")
        first.agreed_answer.append("POISON")
    else:
        value["invalid"] = "POISON"
    second = decide([ans("default", raw), ans("skeptical", raw)], schema, AGENTS, 0.5)
    assert [n.json_value for n in second.answers] == [want, want]
    assert second.agreed_answer == (want if isinstance(raw, list) else None)

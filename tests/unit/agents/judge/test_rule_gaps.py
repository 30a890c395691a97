"""The chart-review skill's rules the judge used to miss (table-driven): a ``.txt`` note id
is stripped, every quoted span is checked whatever its quote marks, and a gated criterion is
told its gate cell's answer when that cell was decided."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest

from agents.context.assemble import gather
from agents.judge.case import UNKNOWN, gate_text
from agents.judge.gates import GateAnswer, GateAnswers
from agents.judge.gates_feed import absorb
from agents.judge.prompt import build_request
from agents.judge.quotes import quoted_spans
from agents.judge.validate import validate_analysis
from schemas.calibration import Adjudication
from schemas.chart_review import CellOutcome
from schemas.skill import Gate, Skill
from tests.unit.agents.judge.fixtures import NOTES, PATIENT, TASK, answer, job
from tests.unit.agents.judge.test_validate import GOOD

REAL = "Type 2 diabetes mellitus, on metformin since 2016"
FAKE = "Type 1 diabetes diagnosed in childhood"


def check(skill: Skill, **change: Any) -> Any:
    return validate_analysis({**GOOD, **change}, criterion=skill.criteria["t2dm_dx"],
                             notes=NOTES, n_agents=2)


def kinds(result: Any) -> list[tuple[str, str]]:
    return [(p.type, p.action) for p in result.problems]


@pytest.mark.parametrize(("note_id", "kept", "problems"), [
    ("n01.txt", "n01", [("note_id_suffix", "repaired")]),
    ("n01.TXT", "n01", [("note_id_suffix", "repaired")]),
    ("n01", "n01", []),
    # only the suffix is stripped: an unknown note stays unknown
    ("n99.txt", None, [("unknown_note", "dropped"), ("no_evidence_pointers", "flagged")]),
])
def test_a_txt_note_id_loses_its_suffix_instead_of_the_pointer(
        skill: Skill, note_id: str, kept: str | None, problems: list[tuple[str, str]]) -> None:
    pointer = {"note_id": note_id, "what_to_look_for": "problem list entry", "offsets": None}
    result = check(skill, evidence_pointers=[pointer])
    assert [p.note_id for p in result.analysis.evidence_pointers] == ([kept] if kept else [])
    assert kinds(result) == problems


@pytest.mark.parametrize(("marks", "found"), [
    ('"{}"', True), ("'{}'", True), ("\u201c{}\u201d", True), ("\u2018{}\u2019", True),
    ("\u00ab{}\u00bb", True), ("\u00bb{}\u00ab", True), ("\u201e{}\u201c", True),
    ("\u2039{}\u203a", True), ("{}", False),
])
def test_quoted_spans_are_found_whatever_the_marks(marks: str, found: bool) -> None:
    text = "The note states " + marks.format(REAL) + " in the problem list."
    assert quoted_spans(text) == ([REAL] if found else [])


@pytest.mark.parametrize("text", [
    "The patient's chart and the agents' answers disagree on the date.",
    "Agent B's reading isn't the patient's own diagnosis, it's the mother's.",
    'Short names like "yes" or \'no_info\' are values, not quotations.',
])
def test_apostrophes_and_value_names_are_not_quotes(text: str) -> None:
    assert quoted_spans(text) == []


@pytest.mark.parametrize(("marks", "problems", "confidence"), [
    ('"{}"', [("unverified_quote", "flagged")], "medium"),
    ("'{}'", [("unverified_quote", "flagged")], "medium"),
    ("\u2018{}\u2019", [("unverified_quote", "flagged")], "medium"),
    ("\u00ab{}\u00bb", [("unverified_quote", "flagged")], "medium"),
    ("{}", [], "high"),  # not presented as a quote: nothing to verify
])
def test_an_invented_quote_is_flagged_whatever_its_marks(
        skill: Skill, marks: str, problems: list[tuple[str, str]], confidence: str) -> None:
    reasoning = f"The chart says {marks.format(FAKE)}. Agent B misread the family history."
    result = check(skill, reasoning=reasoning)
    assert kinds(result) == problems
    assert result.analysis.judge_confidence == confidence


@pytest.mark.parametrize("marks", ['"{}"', "'{}'", "\u201c{}\u201d", "\u00ab{}\u00bb"])
def test_a_real_quote_passes_whatever_its_marks(skill: Skill, marks: str) -> None:
    result = check(skill, reasoning=f"The problem list states {marks.format(REAL)}. Agent B "
                   "read the family history as the patient's own.")
    assert kinds(result) == []


@pytest.mark.parametrize(("what", "problems"), [
    # a pointer wrapped in quote marks presents a quote: an invented one is flagged
    (f'"{FAKE}"', [("unverified_quote", "flagged")]),
    (f"\u00ab{FAKE}\u00bb", [("unverified_quote", "flagged")]),
    (f"look for '{FAKE}'", [("unverified_quote", "flagged")]),
    # a real one is a copied quote, not a phrase (already a rule)
    ('"Type 2 diabetes mellitus"', [("pointer_not_a_phrase", "flagged")]),
    ("problem list entry", []),
    ('"A1c"', []),  # too short to be a quotation
])
def test_pointer_text_presented_as_a_quote_is_checked(
        skill: Skill, what: str, problems: list[tuple[str, str]]) -> None:
    pointer = {"note_id": "n01", "what_to_look_for": what, "offsets": None}
    assert kinds(check(skill, evidence_pointers=[pointer])) == problems


# -- the gate answer -------------------------------------------------------------------


def outcome(outcome: str, agreed: Any, *, field_id: str = "t2dm_dx", job_kind: str | None = None,
            minutes: int = 0, patient: str = PATIENT) -> CellOutcome:
    return CellOutcome(outcome_id=f"o-{outcome}-{minutes}", outcome=outcome,  # type: ignore[arg-type]
                       task_id=TASK, patient_id=patient, field_id=field_id,
                       agents=("default", "skeptical"), job_kind=job_kind,  # type: ignore[arg-type]
                       decided_at=datetime(2025, 1, 1, tzinfo=UTC) + timedelta(minutes=minutes),
                       agreed_answer=agreed)


def gated(skill: Skill, value: Any = True) -> Skill:
    crit = skill.criteria["on_sglt2i"].model_copy(update={"gate": Gate(field_id="t2dm_dx",
                                                                      value=value)})
    return skill.model_copy(update={"criteria": {**skill.criteria, "on_sglt2i": crit}})


@pytest.mark.parametrize(("outcomes", "says"), [
    ((), "not known to the judge (its cell has not been decided yet)"),
    ((outcome("agreement", True),), "true (the agents agreed); the gate is met"),
    ((outcome("type_drift", True, job_kind="type_drift"),),
     "true (the agents agreed); the gate is met"),
    ((outcome("agreement", False),), "false (the agents agreed); the gate is NOT met"),
    ((outcome("agent_missing", True),), "true (one agent answered); the gate is met"),
    ((outcome("disagreement", None, job_kind="disagreement"),),
     "not known to the judge (the agents disagree on it)"),
    ((outcome("low_confidence", None, job_kind="low_confidence"),),
     "not known to the judge (an agent marked its answer low confidence)"),
    # the latest decision wins, in whatever order the outcomes arrive
    ((outcome("agreement", True, minutes=5), outcome("disagreement", None,
                                                     job_kind="disagreement", minutes=1)),
     "true (the agents agreed)"),
    ((outcome("disagreement", None, job_kind="disagreement", minutes=1),
      outcome("agreement", False, minutes=5)), "false (the agents agreed)"),
    # another patient's gate cell says nothing about this one
    ((outcome("agreement", True, patient="p999"),),
     "not known to the judge (its cell has not been decided yet)"),
])
def test_the_gate_answer_reaches_the_prompt(skill: Skill, outcomes: tuple[CellOutcome, ...],
                                            says: str) -> None:
    sk = gated(skill)
    store = GateAnswers(sk)
    for o in outcomes:
        store.add(o)
    crit = sk.criteria["on_sglt2i"]
    j = job("disagreement", answer("default", "yes", field_id="on_sglt2i"),
            answer("skeptical", "no", field_id="on_sglt2i"))
    ctx = gather(j.answers, crit.keywords, NOTES, 5000)
    r = build_request(sk, crit, j, ctx, structured=True, max_tokens=800,
                      gate_answer=store.lookup(TASK, PATIENT, crit))
    assert f"Gate criterion t2dm_dx: the patient's answer is {says}" in r.messages[0]["content"]


def test_the_store_keeps_gate_criteria_only_and_compares_by_schema(skill: Skill) -> None:
    sk = gated(skill, value="yes")  # the gate spelled "yes"; the boolean schema says true
    store = GateAnswers(sk)
    assert store.fields == {"t2dm_dx"}
    assert not store.add(outcome("agreement", "yes", field_id="on_sglt2i"))
    assert store.add(outcome("agreement", True))
    assert store.lookup(TASK, PATIENT, sk.criteria["on_sglt2i"]) == GateAnswer(
        "t2dm_dx", "agreement", True, True, True)
    assert store.lookup(TASK, PATIENT, sk.criteria["t2dm_dx"]) is None  # not gated
    assert len(store) == 1


def adjudication(final: Any, minutes: int = 30) -> Adjudication:
    return Adjudication(task_id=TASK, patient_id=PATIENT, field_id="t2dm_dx",
                        final_answer=final, classification="agent_a_error",
                        agent_correctness="agent_b", adjudicator="rev-1",
                        adjudicated_at=datetime(2025, 1, 1, tzinfo=UTC)
                        + timedelta(minutes=minutes))


@pytest.mark.parametrize(("adjudications", "says"), [
    # a reviewer's verdict settles a gate cell the agents split on, and outranks agreement
    ((adjudication(True),), "true (a reviewer adjudicated it); the gate is met"),
    ((adjudication(False),), "false (a reviewer adjudicated it); the gate is NOT met"),
    ((adjudication(False, 40), adjudication(True, 35)), "false (a reviewer adjudicated it)"),
])
def test_an_adjudicated_gate_cell_outranks_the_agents(skill: Skill, adjudications: Any,
                                                      says: str) -> None:
    sk = gated(skill)
    store = GateAnswers(sk)
    store.add(outcome("disagreement", None, job_kind="disagreement"))
    for a in adjudications:
        store.add_adjudication(a)
    assert gate_text(store.lookup(TASK, PATIENT, sk.criteria["on_sglt2i"])).startswith(says)
    assert len(store) == 1


def test_an_invalid_outcome_record_is_skipped(skill: Skill) -> None:
    store = GateAnswers(gated(skill))
    assert absorb(store, b"not json") == "invalid_json"
    assert absorb(store, b'{"outcome": "x"}') == "schema_error"
    assert absorb(store, outcome("agreement", True).model_dump_json().encode()) is None
    assert absorb(store, b'{"final_answer": true}', adjudication=True) == "schema_error"
    assert absorb(store, adjudication(True).model_dump_json().encode(),
                  adjudication=True) is None
    assert len(store) == 1


def test_a_naive_adjudication_time_is_skipped_not_fatal(skill: Skill) -> None:
    """Issue 25: an adjudication without a UTC offset after an aware one raised TypeError
    in the store's comparison and killed the follower, silently; it is a schema error,
    skipped, and the adjudications after it are stored."""
    store = GateAnswers(gated(skill))
    aware = adjudication(True).model_dump(mode="json")
    assert absorb(store, orjson.dumps(aware), adjudication=True) is None
    naive = {**aware, "adjudicated_at": "2024-05-08T10:24:00", "final_answer": False}
    assert absorb(store, orjson.dumps(naive), adjudication=True) == "schema_error"
    later = {**aware, "adjudicated_at": "2099-01-01T00:00:00Z", "final_answer": False}
    assert absorb(store, orjson.dumps(later), adjudication=True) is None


def test_a_failure_while_storing_skips_the_record(skill: Skill) -> None:
    class Broken(GateAnswers):
        def add(self, outcome: CellOutcome) -> bool:
            raise TypeError("can't compare offset-naive and offset-aware datetimes")

    store = Broken(gated(skill))
    assert absorb(store, outcome("agreement", True).model_dump_json().encode()) == "TypeError"


def test_gate_text_without_a_store_is_unknown() -> None:
    assert gate_text(UNKNOWN) == "not known to the judge"
    assert gate_text("yes") == '"yes"'

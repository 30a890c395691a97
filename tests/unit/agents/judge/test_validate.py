"""Validation of judge answers in code (pure, table-driven)."""

from __future__ import annotations

from typing import Any

import pytest

from agents.judge.validate import validate_analysis
from schemas.skill import Skill
from tests.unit.agents.judge.fixtures import NOTES

GOOD: dict[str, Any] = {
    "suggested_answer": True,
    "reasoning": 'The problem list states "Type 2 diabetes mellitus, on metformin since 2016". '
                 "Agent B read the family history as the patient's own.",
    "evidence_pointers": [{"note_id": "n01", "what_to_look_for": "problem list entry",
                           "offsets": [13, 40]}],
    "agent_correctness": "agent_a",
    "classification_hint": "agent_b_error",
    "judge_confidence": "high",
}


def check(skill: Skill, payload: Any, field_id: str = "t2dm_dx", n_agents: int = 2) -> Any:
    return validate_analysis(payload, criterion=skill.criteria[field_id], notes=NOTES,
                             n_agents=n_agents)


def types(result: Any) -> list[tuple[str, str]]:
    return [(p.type, p.action) for p in result.problems]


def test_a_valid_answer_passes_untouched(skill: Skill) -> None:
    result = check(skill, GOOD)
    assert result.analysis is not None and result.problems == ()
    assert result.analysis.suggested_answer is True
    assert result.analysis.judge_confidence == "high"


@pytest.mark.parametrize(("change", "expected"), [
    ({"verdict": "x"}, [("unknown_key", "fallback")]),
    ({"judge_confidence": None, "drop": "judge_confidence"}, [("missing_key", "fallback")]),
    ({"suggested_answer": "maybe"}, [("answer_not_in_schema", "fallback")]),
    ({"agent_correctness": "agent_c"}, [("invalid_field", "fallback")]),
    ({"reasoning": "  "}, [("empty_reasoning", "fallback")]),
    ({"evidence_pointers": [{"note_id": "n01", "what": "x", "offsets": None}]},
     [("invalid_field", "fallback")]),
])
def test_unusable_answers_have_no_analysis(skill: Skill, change: dict[str, Any],
                                           expected: list[tuple[str, str]]) -> None:
    payload = {**GOOD, **change}
    if "drop" in change:
        payload.pop(change["drop"])
        payload.pop("drop")
    result = check(skill, payload)
    assert result.analysis is None
    assert types(result) == expected


def test_not_an_object(skill: Skill) -> None:
    assert types(check(skill, ["x"])) == [("not_an_object", "fallback")]


@pytest.mark.parametrize(("field_id", "raw", "canonical"), [
    ("t2dm_dx", "yes", True), ("t2dm_dx", "No", False), ("on_sglt2i", True, "yes"),
    ("on_sglt2i", "YES", "yes"), ("latest_hba1c", "8.2%", 8.2),
])
def test_answers_are_rewritten_to_the_schema_spelling(skill: Skill, field_id: str, raw: Any,
                                                      canonical: Any) -> None:
    result = check(skill, {**GOOD, "suggested_answer": raw}, field_id)
    assert result.analysis is not None and result.analysis.suggested_answer == canonical
    assert ("noncanonical_answer", "repaired") in types(result)


def test_an_unknown_note_pointer_is_dropped(skill: Skill) -> None:
    pointers = [{"note_id": "n99", "what_to_look_for": "x", "offsets": None},
                *GOOD["evidence_pointers"]]
    result = check(skill, {**GOOD, "evidence_pointers": pointers})
    assert [p.note_id for p in result.analysis.evidence_pointers] == ["n01"]
    assert types(result) == [("unknown_note", "dropped")]


def test_offsets_outside_the_note_are_cleared(skill: Skill) -> None:
    pointers = [{"note_id": "n03", "what_to_look_for": "x", "offsets": [10, 5000]}]
    result = check(skill, {**GOOD, "evidence_pointers": pointers})
    assert result.analysis.evidence_pointers[0].offsets is None
    assert types(result) == [("offsets_out_of_range", "repaired")]


def test_more_than_three_pointers_are_cut(skill: Skill) -> None:
    pointers = [{"note_id": n, "what_to_look_for": "x", "offsets": None}
                for n in ("n01", "n02", "n03", "n04")]
    result = check(skill, {**GOOD, "evidence_pointers": pointers})
    assert len(result.analysis.evidence_pointers) == 3
    assert types(result) == [("too_many_pointers", "repaired")]


def test_an_invented_quote_is_flagged_and_lowers_confidence(skill: Skill) -> None:
    reasoning = 'The note says "patient started insulin glargine last week". That settles it.'
    result = check(skill, {**GOOD, "reasoning": reasoning})
    assert result.analysis is not None
    assert result.analysis.judge_confidence == "medium"
    assert types(result) == [("unverified_quote", "flagged")]


def test_real_quotes_match_despite_case_whitespace_and_ellipsis(skill: Skill) -> None:
    reasoning = ('The chart states "type 2 diabetes\n   mellitus, on metformin" and '
                 '"Repeat A1c 8.2% ... Diabetes management discussed". Short "yes" is no quote.')
    result = check(skill, {**GOOD, "reasoning": reasoning})
    assert result.problems == () and result.analysis.judge_confidence == "high"


@pytest.mark.parametrize(("change", "n_agents", "fixed"), [
    ({"agent_correctness": "agent_b"}, 1, {"agent_correctness": "n_a"}),
    ({"classification_hint": "agent_b_error", "agent_correctness": "n_a"}, 1,
     {"classification_hint": "n_a"}),
    ({"suggested_answer": None, "classification_hint": "true_ambiguity"}, 2,
     {"judge_confidence": "low"}),
])
def test_judge_rules_are_enforced(skill: Skill, change: dict[str, Any], n_agents: int,
                                  fixed: dict[str, Any]) -> None:
    result = check(skill, {**GOOD, **change}, n_agents=n_agents)
    for key, value in fixed.items():
        assert getattr(result.analysis, key) == value
    assert ("rule_violation", "repaired") in types(result)


def test_hedging_boilerplate_is_flagged(skill: Skill) -> None:
    result = check(skill, {**GOOD, "reasoning": "Based on the chart, I think it is true."})
    assert ("hedging", "flagged") in types(result)

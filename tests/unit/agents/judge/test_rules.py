"""The chart-review judge's field rules, enforced in code (table-driven)."""

from __future__ import annotations

from typing import Any

import pytest

from agents.judge.validate import needs_review, sentences, validate_analysis
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
#: canonical answers of agent A and agent B in the disagreement the tables use
AB = (True, False)


def run(skill: Skill, change: dict[str, Any], kind: str = "disagreement",
        n_agents: int = 2, agents: tuple[Any, ...] = AB) -> Any:
    return validate_analysis({**GOOD, **change}, criterion=skill.criteria["t2dm_dx"],
                             notes=NOTES, n_agents=n_agents, kind=kind,  # type: ignore[arg-type]
                             agent_answers=agents)


def fields(result: Any) -> dict[str, Any]:
    a = result.analysis
    return {"agent_correctness": a.agent_correctness,
            "classification_hint": a.classification_hint,
            "judge_confidence": a.judge_confidence}


def types(result: Any) -> list[tuple[str, str]]:
    return [(p.type, p.action) for p in result.problems]


@pytest.mark.parametrize(("change", "n_agents", "expected"), [
    # low_confidence: both fields n_a, whatever the number of answers carried
    ({}, 1, {"agent_correctness": "n_a", "classification_hint": "n_a"}),
    ({}, 2, {"agent_correctness": "n_a", "classification_hint": "n_a"}),
    ({"agent_correctness": "both", "classification_hint": "true_ambiguity"}, 3,
     {"agent_correctness": "n_a", "classification_hint": "n_a"}),
    # null answer on a low_confidence cell: confidence low, hint stays n_a
    ({"suggested_answer": None}, 1, {"agent_correctness": "n_a", "classification_hint": "n_a",
                                     "judge_confidence": "low"}),
])
def test_low_confidence_cells_get_n_a(skill: Skill, change: dict[str, Any], n_agents: int,
                                      expected: dict[str, Any]) -> None:
    result = run(skill, change, "low_confidence", n_agents)
    assert {k: fields(result)[k] for k in expected} == expected
    assert ("rule_violation", "repaired") in types(result)


@pytest.mark.parametrize(("change", "agents", "correctness"), [
    ({"agent_correctness": "n_a"}, AB, "agent_a"),               # suggestion = A's answer
    ({"agent_correctness": "n_a", "suggested_answer": False,
      "classification_hint": "agent_a_error"}, AB, "agent_b"),   # suggestion = B's answer
    ({"agent_correctness": "n_a", "suggested_answer": "no_info",
      "classification_hint": "guideline_gap"}, AB, "neither"),   # neither agent's answer
    ({"agent_correctness": "n_a", "suggested_answer": None}, AB, "neither"),
])
def test_a_disagreement_never_has_n_a_correctness(skill: Skill, change: dict[str, Any],
                                                  agents: tuple[Any, ...],
                                                  correctness: str) -> None:
    result = run(skill, change, agents=agents)
    assert result.analysis.agent_correctness == correctness
    assert ("rule_violation", "repaired") in types(result)


def test_a_null_answer_is_low_confidence_true_ambiguity(skill: Skill) -> None:
    result = run(skill, {"suggested_answer": None, "agent_correctness": "neither",
                         "classification_hint": "guideline_gap"})
    assert fields(result) == {"agent_correctness": "neither",
                              "classification_hint": "true_ambiguity",
                              "judge_confidence": "low"}


@pytest.mark.parametrize(("change", "repaired_to"), [
    # the suggestion is agent A's answer: the fields are rebuilt from it
    ({"agent_correctness": "both", "classification_hint": "agent_a_error"},
     ("agent_a", "agent_b_error")),
    ({"agent_correctness": "agent_a", "classification_hint": "agent_a_error"},
     ("agent_a", "agent_b_error")),
    ({"agent_correctness": "neither", "classification_hint": "agent_b_error"},
     ("agent_a", "agent_b_error")),
    ({"agent_correctness": "agent_b", "classification_hint": "agent_a_error"},
     ("agent_a", "agent_b_error")),   # names B correct, but suggests A's answer
    # the suggestion is agent B's answer
    ({"suggested_answer": False, "agent_correctness": "agent_b",
      "classification_hint": "agent_b_error"}, ("agent_b", "agent_a_error")),
])
def test_contradictory_pairs_are_repaired_from_the_suggestion(
        skill: Skill, change: dict[str, Any], repaired_to: tuple[str, str]) -> None:
    result = run(skill, change)
    a = result.analysis
    assert (a.agent_correctness, a.classification_hint) == repaired_to
    assert ("contradictory_fields", "repaired") in types(result)
    assert needs_review(result.problems) == []


@pytest.mark.parametrize("change", [
    {"suggested_answer": "no_info", "agent_correctness": "both",
     "classification_hint": "agent_a_error"},
    {"suggested_answer": "no_info", "agent_correctness": "agent_b",
     "classification_hint": "agent_b_error"},
])
def test_contradictions_the_suggestion_cannot_settle_are_flagged(
        skill: Skill, change: dict[str, Any]) -> None:
    result = run(skill, change)
    assert ("contradictory_fields", "flagged") in types(result)
    assert [p.type for p in needs_review(result.problems)] == ["contradictory_fields"]


@pytest.mark.parametrize(("pointers", "expected"), [
    ([], [("no_evidence_pointers", "flagged")]),
    ([{"note_id": "n99", "what_to_look_for": "x", "offsets": None}],
     [("unknown_note", "dropped"), ("no_evidence_pointers", "flagged")]),
    ([{"note_id": "n01", "what_to_look_for": "  ", "offsets": None}],
     [("pointer_not_a_phrase", "flagged"), ("no_evidence_pointers", "flagged")]),
    ([{"note_id": "n01", "what_to_look_for": "Type 2 diabetes mellitus, on metformin",
       "offsets": None}], [("pointer_not_a_phrase", "flagged")]),          # copied quote
    ([{"note_id": "n01", "what_to_look_for": "the first line of the problem list where "
       "the diagnosis and the drug are written", "offsets": None}],
     [("pointer_not_a_phrase", "flagged")]),                              # a sentence
    ([{"note_id": "n01", "what_to_look_for": "metformin start date", "offsets": None}], []),
])
def test_evidence_pointers_are_one_to_three_short_phrases(
        skill: Skill, pointers: list[Any], expected: list[tuple[str, str]]) -> None:
    assert types(run(skill, {"evidence_pointers": pointers})) == expected


@pytest.mark.parametrize(("text", "n"), [
    ("One.", 1),
    ("One sentence. Two sentences.", 2),
    ('The note says "A1c 8.2%. Repeat in 3 months." Agent B missed it.', 2),
    ("Dr. Smith lists e.g. metformin vs. insulin. It is type 2. Agent A is right. Done.", 4),
    ("A. B. C. D. E.", 5),
])
def test_sentences_are_counted_outside_quotes_and_abbreviations(text: str, n: int) -> None:
    assert sentences(text) == n


@pytest.mark.parametrize(("reasoning", "flagged"), [
    ("Type 2 diabetes is on the problem list.", True),
    ("It is on the problem list. Agent B misread the family history.", False),
    ("One. Two. Three. Four.", False),
    ("One. Two. Three. Four. Five.", True),
])
def test_reasoning_has_two_to_four_sentences(skill: Skill, reasoning: str,
                                             flagged: bool) -> None:
    result = run(skill, {"reasoning": reasoning})
    assert (("reasoning_length", "flagged") in types(result)) is flagged


def test_quotes_are_checked_against_the_notes_shown_not_all_notes(skill: Skill) -> None:
    payload = {**GOOD, "reasoning": 'The endocrinology note says "Repeat A1c 8.2% on '
               '2024-06-10". Agent B missed it.'}
    crit = skill.criteria["t2dm_dx"]
    shown = validate_analysis(payload, criterion=crit, notes=NOTES, n_agents=2,
                              agent_answers=AB, shown=[NOTES["n01"]])
    everything = validate_analysis(payload, criterion=crit, notes=NOTES, n_agents=2,
                                   agent_answers=AB)
    assert ("unverified_quote", "flagged") in types(shown)
    assert "unverified_quote" not in [p.type for p in everything.problems]


"""The offline heuristic judge: grounding, negation cues, answer validity."""

from __future__ import annotations

from agents.judge.offline import offline_payload
from agents.judge.validate import validate_analysis
from schemas.skill import Skill
from tests.unit.agents.judge.fixtures import NOTES, answer, job


def run(skill: Skill, j: object) -> dict:
    payload = offline_payload(j, skill.criteria[j.field_id], NOTES)  # type: ignore[attr-defined]
    check = validate_analysis(payload, criterion=skill.criteria[j.field_id], notes=NOTES,  # type: ignore[attr-defined]
                              n_agents=len(j.answers))  # type: ignore[attr-defined]
    assert check.analysis is not None, check.problems  # its output passes our own validation
    assert check.problems == ()
    return payload


def test_the_grounded_agent_wins_a_disagreement(skill: Skill) -> None:
    j = job("disagreement",
            answer("default", True, quotes=(("n01", "Type 2 diabetes mellitus, on metformin"),
                                            ("n04", "Repeat A1c 8.2%"))),
            answer("skeptical", False, quotes=(("n02", "patient denies diabetes"),)))
    p = run(skill, j)
    assert (p["suggested_answer"], p["agent_correctness"], p["classification_hint"]) == (
        True, "agent_a", "agent_b_error")
    assert p["judge_confidence"] == "medium"
    assert p["evidence_pointers"][0]["note_id"] == "n01"
    start, end = p["evidence_pointers"][0]["offsets"]
    assert NOTES["n01"][start:end] == "Type 2 diabetes mellitus, on metformin"


def test_a_quote_under_a_family_history_cue_contradicts_a_yes(skill: Skill) -> None:
    j = job("disagreement",
            answer("default", True, quotes=(("n02", "mother with type 2 diabetes"),)),
            answer("skeptical", "no_info"))
    p = run(skill, j)
    assert p["agent_correctness"] == "agent_b" and p["suggested_answer"] == "no_info"
    assert p["judge_confidence"] == "low"  # no_info while uncited notes mention diabetes


def test_a_tie_is_ambiguous(skill: Skill) -> None:
    j = job("disagreement",
            answer("default", True, quotes=(("n01", "Type 2 diabetes mellitus"),)),
            answer("skeptical", False, quotes=(("n02", "No personal history of diabetes"),)))
    p = run(skill, j)
    assert p["suggested_answer"] is None and p["classification_hint"] == "true_ambiguity"
    assert p["judge_confidence"] == "low"


def test_low_confidence_keeps_a_grounded_answer(skill: Skill) -> None:
    j = job("low_confidence", answer("default", "yes", field_id="on_sglt2i", confidence="low",
                                     quotes=(("n03", "empagliflozin 10 mg daily"),)))
    p = run(skill, j)
    assert (p["suggested_answer"], p["agent_correctness"], p["judge_confidence"]) == (
        "yes", "n_a", "medium")


def test_an_invalid_answer_loses(skill: Skill) -> None:
    j = job("disagreement", answer("default", "perhaps"),
            answer("skeptical", True, quotes=(("n01", "Type 2 diabetes mellitus"),)))
    p = run(skill, j)
    assert p["agent_correctness"] == "agent_b" and p["suggested_answer"] is True


def test_offline_is_deterministic(skill: Skill) -> None:
    j = job("disagreement", answer("default", True), answer("skeptical", False))
    assert offline_payload(j, skill.criteria["t2dm_dx"], NOTES) == offline_payload(
        j, skill.criteria["t2dm_dx"], NOTES)


def test_every_agent_is_graded_and_named_by_its_id(skill: Skill) -> None:
    """Three agents (issue 16 item 2): the third is graded too, and the reasoning and the
    pointers name agents by id, never by the contract's positional labels."""
    grounded = (("n01", "Type 2 diabetes mellitus, on metformin"), ("n04", "Repeat A1c 8.2%"))
    j = job("disagreement", answer("default", False),
            answer("skeptical", False, quotes=(("n02", "patient denies diabetes"),)),
            answer("third", True, quotes=grounded))
    p = run(skill, j)
    # the third agent's grounded answer wins; both of the first two answered otherwise
    assert (p["suggested_answer"], p["agent_correctness"]) == (True, "neither")
    assert p["classification_hint"] == "n_a"  # the contract's tokens cannot blame both
    assert "third answered true" in p["reasoning"] and "default answered false" in p["reasoning"]
    assert p["evidence_pointers"][0]["what_to_look_for"] == "passage cited by third"
    assert "agent_a" not in p["reasoning"] and "agent_b" not in p["reasoning"]


def test_only_a_third_agent_dissenting_blames_neither_of_the_first_two(skill: Skill) -> None:
    grounded = (("n01", "Type 2 diabetes mellitus, on metformin"), ("n04", "Repeat A1c 8.2%"))
    j = job("disagreement", answer("default", True, quotes=grounded),
            answer("skeptical", True, quotes=grounded[:1]), answer("third", False))
    p = run(skill, j)
    assert (p["suggested_answer"], p["agent_correctness"], p["classification_hint"]) == (
        True, "both", "n_a")

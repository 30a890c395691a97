"""Type drift is decided from the answer schema, in code."""

from __future__ import annotations

from schemas.skill import Skill
from tests.unit.agents.judge.fixtures import answer, job


def test_boolean_schema_picks_the_boolean_and_names_who_deviated(skill: Skill) -> None:
    j = job("type_drift", answer("default", True), answer("skeptical", "yes"))
    from agents.judge.typedrift import type_drift_analysis

    a = type_drift_analysis(j, skill.criteria["t2dm_dx"])
    assert a.suggested_answer is True
    assert (a.agent_correctness, a.classification_hint, a.judge_confidence) == (
        "both", "n_a", "high")
    assert "agent_a (default, true) used the canonical form" in a.reasoning
    assert 'agent_b (skeptical, "yes") deviated' in a.reasoning
    assert "format drift" in a.reasoning


def test_yes_no_schema_picks_the_string(skill: Skill) -> None:
    from agents.judge.typedrift import type_drift_analysis

    j = job("type_drift", answer("default", True, field_id="on_sglt2i"),
            answer("skeptical", "yes", field_id="on_sglt2i"))
    a = type_drift_analysis(j, skill.criteria["on_sglt2i"])
    assert a.suggested_answer == "yes"
    assert "agent_b (skeptical" in a.reasoning.split("deviated")[0]


def test_answers_that_do_not_agree_get_no_canonical_form(skill: Skill) -> None:
    from agents.judge.typedrift import type_drift_analysis

    j = job("type_drift", answer("default", True), answer("skeptical", "no"))
    a = type_drift_analysis(j, skill.criteria["t2dm_dx"])
    assert a.suggested_answer is None and a.judge_confidence == "low"

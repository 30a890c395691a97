"""Results name the reviewer agents by id, for two agents or more (issue 16)."""

from __future__ import annotations

from typing import Any

import pytest

from agents.calibrate.core import reviewer_agents
from agents.judge.reviewers import correct_agents, error_agent
from schemas.chart_review import JudgeAnalysis


def analysis(correctness: str, hint: str = "n_a", suggested: Any = "yes") -> JudgeAnalysis:
    return JudgeAnalysis(suggested_answer=suggested, reasoning="r.", agent_correctness=correctness,
                         classification_hint=hint, judge_confidence="high")


TWO, THREE = ("default", "skeptical"), ("default", "skeptical", "third")


@pytest.mark.parametrize(("correctness", "agents", "normalized", "suggestion", "expected"), [
    ("agent_a", TWO, ("yes", "no"), "yes", ("default",)),
    ("agent_b", TWO, ("yes", "no"), "no", ("skeptical",)),
    ("both", TWO, ("yes", "yes"), "yes", ("default", "skeptical")),
    ("neither", TWO, ("yes", "no"), "maybe", ()),
    ("n_a", TWO, ("yes", "no"), "yes", None),
    # a third agent is named when its answer is the suggested one
    ("agent_a", THREE, ("yes", "no", "yes"), "yes", ("default", "third")),
    ("agent_b", THREE, ("yes", "no", "yes"), "no", ("skeptical",)),
    ("neither", THREE, ("yes", "no", "maybe"), "maybe", ("third",)),
    ("agent_a", THREE, ("yes", "no", "yes"), None, ("default",)),  # abstained
])
def test_correct_agents_by_id(correctness: str, agents: tuple[str, ...],
                              normalized: tuple[Any, ...], suggestion: Any,
                              expected: tuple[str, ...] | None) -> None:
    assert correct_agents(analysis(correctness), agents, normalized, suggestion) == expected


@pytest.mark.parametrize(("hint", "agents", "expected"), [
    ("agent_a_error", TWO, "default"), ("agent_b_error", THREE, "skeptical"),
    ("agent_b_error", ("default",), None), ("guideline_gap", TWO, None), ("n_a", TWO, None)])
def test_error_agent_by_id(hint: str, agents: tuple[str, ...], expected: str | None) -> None:
    assert error_agent(analysis("n_a", hint), agents) == expected


def test_calibration_names_the_agents_most_results_list() -> None:
    class R:
        def __init__(self, agents: tuple[str, ...]) -> None:
            self.agents = agents

    results: Any = [R(THREE), R(THREE), R(("skeptical", "third")), R(())]
    assert reviewer_agents(results) == THREE
    assert reviewer_agents([]) == ()

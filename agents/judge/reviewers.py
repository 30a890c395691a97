"""The analysis's positional reviewer labels (``agent_a``, ``agent_b_error``) turned into the
agents' ids, for a job with any number of agents. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from schemas.chart_review import JudgeAnalysis
from schemas.reviewer_labels import blamed

_NAMED = {"agent_a": slice(0, 1), "agent_b": slice(1, 2), "both": slice(0, 2),
          "neither": slice(0, 0)}


def correct_agents(analysis: JudgeAnalysis, agents: Sequence[str], normalized: Sequence[Any],
                   suggestion: Any) -> tuple[str, ...] | None:
    """The agents the judge found right: ``agent_correctness`` names the first two; a further
    agent is right when its canonical answer equals ``suggestion`` (the canonical suggested
    answer; None when the judge abstained). None for ``n_a``."""
    label = analysis.agent_correctness
    if label not in _NAMED:
        return None
    named = tuple(agents[_NAMED[label]])
    if suggestion is None:
        return named
    return named + tuple(a for a, value in zip(agents[2:], normalized[2:], strict=False)
                         if value == suggestion)


def error_agent(analysis: JudgeAnalysis, agents: Sequence[str]) -> str | None:
    """The agent ``classification_hint`` blames (``agent_b_error`` -> ``agents[1]``)."""
    return blamed(analysis.classification_hint, None, agents)

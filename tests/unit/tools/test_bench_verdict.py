"""Benchmark goals carry a verdict word: ``met`` or ``NOT met`` (judged on the printed figure)."""

from __future__ import annotations

import pytest

from tools.bench.judge_tier import TierUse, report
from tools.bench.verdict import goal


def test_goal_words() -> None:
    assert goal(">= 90%", True) == "(goal >= 90%: met)"
    assert goal(">= 90%", False) == "(goal >= 90%: NOT met)"


def _use(input_tokens: float, refused: int) -> TierUse:
    return TierUse.from_stats({
        "tier": {"rpm": 60, "itpm": 6_000, "otpm": 600, "minute_seconds": 6.0},
        "spent": {"requests": 10, "input-tokens": input_tokens, "output-tokens": 10},
        "refused": {"requests": refused}, "first": 10.0, "last": 16.0})


@pytest.mark.parametrize("tokens, refused, cache, words", [
    (11_400, 0, 0.7, ["(goal >= 90%: met)", "(goal 0: met)", "(goal >= 60%: met)"]),
    (6_000, 3, 0.2, ["(goal >= 90%: NOT met)", "(goal 0: NOT met)", "(goal >= 60%: NOT met)"]),
    (10_776, 0, 0.596, ["(goal >= 90%: met)", "(goal >= 60%: met)"]),  # printed 90%, 60%
])
def test_tier_report_says_met_or_not(tokens: float, refused: int, cache: float,
                                     words: list[str]) -> None:
    text = "\n".join(report(_use(tokens, refused), 10, 1.0, {"ok": 10}, cache, "m", 1024))
    for word in words:
        assert word in text

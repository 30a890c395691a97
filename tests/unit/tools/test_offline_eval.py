"""The offline judge against the sample's ground truth (``python -m tools.bench.offline_eval``)."""

from __future__ import annotations

from typing import Any

import pytest

from agents.settings import Settings
from tests.unit.agents.judge.fixtures import answer, job
from tools.bench.offline_eval import evaluate, expected_correctness, sample_jobs


@pytest.mark.parametrize(("kind", "right", "expected"), [
    ("disagreement", ["default"], "agent_a"), ("disagreement", ["skeptical"], "agent_b"),
    ("disagreement", ["default", "skeptical"], "both"), ("disagreement", [], "neither"),
    ("low_confidence", ["default"], "n_a"),
])
def test_expected_correctness_from_the_truth(kind: str, right: list[str],
                                             expected: str) -> None:
    j = job(kind, answer("default", True), answer("skeptical", False))
    assert expected_correctness(j, {"agents_correct": right}) == expected


async def test_the_sample_table_covers_every_job_and_no_rule_is_left_broken() -> None:
    s = Settings()
    jobs = sample_jobs(s)
    rows: list[list[Any]] = await evaluate(s)
    total = dict(zip(("kind", "cells", "answer", "abstained", "correctness", "ok", "flagged",
                      "fallback"), rows[-1], strict=True))
    assert total["kind"] == "all" and total["cells"] == len(jobs) > 80
    assert total["ok"] + total["flagged"] + total["fallback"] == total["cells"]
    assert total["fallback"] == 0
    # the heuristic beats chance on the sample: most non-abstaining answers are right
    assert total["answer"] > 0.8 * (total["cells"] - total["abstained"])

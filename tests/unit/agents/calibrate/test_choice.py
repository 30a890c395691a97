"""The model-choice decision respects n: "not enough cells" below the minimum, "move" only
when the 95% interval of the accuracy difference stays above -margin, else "keep"."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from statsmodels.stats.proportion import confint_proportions_2indep

from agents.calibrate.compare import by_model, render_by_model
from agents.calibrate.core import Calibration
from tests.unit.agents.calibrate import scenario as sc

NOW = datetime(2026, 2, 1, tzinfo=UTC)


def cal(cells: int, cheap_right: int) -> Calibration:
    """``cells`` adjudicated cells ("yes"), judged right by Sonnet everywhere (v1, 0.02 USD
    a cell) and by Haiku on the first ``cheap_right`` (v2, 0.001 USD)."""
    c = Calibration()
    for i in range(cells):
        cell = f"c{i}"
        c.add_result(sc.result(cell, "v1", "yes", "n_a", "both", 0.02).model_copy(
            update={"model": "claude-sonnet-5-5"}))
        c.add_result(sc.result(cell, "v2", "yes" if i < cheap_right else "no", "n_a", "both",
                               0.001).model_copy(update={"model": "claude-haiku-5-5"}))
        c.add_adjudication(sc.adjudication(cell, "yes", "n_a", "both"))
    return c


def verdict(c: Calibration, **kw: object) -> dict[str, object]:
    data = by_model(c, NOW, None, "claude-sonnet-5-5", **kw)  # type: ignore[arg-type]
    [rec] = data["recommendations"]
    return rec


def test_too_few_cells_is_never_a_move() -> None:
    rec = verdict(cal(4, 4), min_cells=30, margin=0.05)  # the README's old "4 of 4"
    assert rec["verdict"] == "not enough cells" and rec["candidate"] == "claude-haiku-5-5"


def test_move_when_the_interval_stays_within_the_margin() -> None:
    rec = verdict(cal(60, 60), min_cells=30, margin=0.10)
    low, high = confint_proportions_2indep(60, 60, 60, 60, method="newcomb", compare="diff")
    assert rec["difference"]["ci95"] == pytest.approx([low, high], abs=1e-6)
    assert low > -0.10 and rec["verdict"] == "move"


def test_keep_when_the_cheaper_model_may_be_worse_by_more_than_the_margin() -> None:
    assert verdict(cal(60, 60), min_cells=30, margin=0.05)["verdict"] == "keep"  # 60 too few
    assert verdict(cal(60, 50), min_cells=30, margin=0.10)["verdict"] == "keep"
    text = render_by_model(by_model(cal(60, 50), NOW, None, "claude-sonnet-5-5", 30, 0.10))
    assert "KEEP claude-sonnet-5-5" in text and "50/60" in text
    assert "not enough cells" in render_by_model(by_model(cal(4, 4), NOW, None, None, 30))

"""``judgeflow compare`` without versions: every criterion by model and prompt version,
against the hand calculation of scenario.py (v1 judged by one model, v2 by another)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agents.calibrate.compare import by_model, render_by_model
from agents.calibrate.core import Calibration
from tests.unit.agents.calibrate import scenario as sc


def fed() -> Calibration:
    cal = Calibration()
    for r in sc.results():
        model = "claude-sonnet-5-5" if r.prompt_version == "v1" else "claude-haiku-5-5"
        cal.add_result(r.model_copy(update={"model": model}))
    for a in sc.adjudications():
        cal.add_adjudication(a)
    for o in sc.outcomes():
        cal.add_outcome(o)
    return cal


def test_each_series_with_its_model_kappa_and_cost_per_1000_cells() -> None:
    data = by_model(fed(), datetime(2026, 2, 1, tzinfo=UTC))
    rows = {r["prompt_version"]: r for r in data["series"]}
    assert [r["model"] for r in data["series"]] == ["claude-sonnet-5-5", "claude-haiku-5-5"]
    assert rows["v1"]["record"]["classification_kappa"] == pytest.approx(0.4)
    assert rows["v2"]["record"]["classification_kappa"] == pytest.approx(1.0)
    # v1: 0.10 USD over 5 cells = 0.02 per cell = 20 per 1,000; v2: 0.05 per cell = 50
    assert rows["v1"]["usd_per_1000_cells"] == pytest.approx(20.0)
    assert rows["v2"]["usd_per_1000_cells"] == pytest.approx(50.0)
    text = render_by_model(data)
    v1 = next(ln for ln in text.splitlines() if " v1 " in ln)
    for cell in ("T/f", "claude-sonnet-5-5", "5", "4", "0.40", "2/3 67%", "1/5 20%", "20.00"):
        assert cell in v1, v1
    assert "USD/1k cells" in text


def test_a_criterion_filter_and_no_results() -> None:
    now = datetime(2026, 2, 1, tzinfo=UTC)
    assert len(by_model(fed(), now, "f")["series"]) == 2
    assert by_model(fed(), now, "other")["series"] == []
    assert by_model(Calibration(), now)["series"] == []

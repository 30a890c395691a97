"""`judgeflow compare OLD NEW` on the real broker: two prompt versions' results and the
adjudications of tests/unit/agents/calibrate/scenario.py -> the hand-calculated figures, as a
table and as JSON; a version with no results is a one-line error."""

from __future__ import annotations

import orjson
import pytest

from tests.helpers import test_settings
from tests.integration.test_calibrate_worker import load_scenario
from tests.integration.test_cli import run_cli

pytestmark = pytest.mark.integration


async def test_compare_prints_the_hand_calculated_figures(bootstrap: str) -> None:
    s = test_settings(bootstrap)
    await load_scenario(bootstrap, s, bad=b"not json")

    data = run_cli(s, "compare", "v1", "v2", "--json")
    assert data.returncode == 0, data.stderr
    assert "2 malformed adjudication(s) (or of an unknown task) ignored" in data.stderr
    out = orjson.loads(data.stdout)
    [row] = out["criteria"]
    old, new = row["old"], row["new"]
    assert (row["task_id"], row["field_id"]) == ("T", "f")
    assert (old["answer_accuracy"]["hits"], old["answer_accuracy"]["n"]) == (2, 3)
    assert (new["answer_accuracy"]["hits"], new["answer_accuracy"]["n"]) == (2, 2)
    assert old["classification_kappa"] == pytest.approx(0.4)
    assert new["classification_kappa"] == pytest.approx(1.0)
    changed = row["changed_suggestions"]
    assert {k: changed[k] for k in ("hits", "n", "rate")} == {"hits": 1, "n": 2, "rate": 0.5}
    assert changed["ci95"] == pytest.approx([0.094531, 0.905469])  # Wilson, by hand
    assert (old["fallback"]["hits"], new["fallback"]["hits"]) == (1, 0)
    assert (old["cost_per_cell_usd"], new["cost_per_cell_usd"]) == (
        pytest.approx(0.02), pytest.approx(0.05))
    assert out["totals"]["old"]["cost_usd"] == pytest.approx(0.10)
    assert out["totals"]["new"]["cells_judged"] == 2

    text = run_cli(s, "compare", "v1", "v2")
    assert text.returncode == 0, text.stderr
    line = next(ln for ln in text.stdout.splitlines() if ln.strip().startswith("T/f"))
    # with Wilson intervals (statsmodels' proportion_confint, method="wilson") and the
    # minimum n (30 by default: 2 adjudicated cells are not enough)
    for cell in ("4 -> 2 (not enough cells)", "2/3 67% [21%, 94%] -> 2/2 100% [34%, 100%]",
                 "0.40 -> 1.00", "1/2 50% [9%, 91%]", "1/5 20% [4%, 62%] -> 0/2 0% [0%, 66%]",
                 "0.0200 -> 0.0500"):
        assert cell in line, line

    every = run_cli(s, "compare")  # no versions: every series with its model
    assert every.returncode == 0, every.stderr
    v1 = next(ln for ln in every.stdout.splitlines() if " v1 " in ln)
    for cell in ("T/f", " m ", "0.40", "2/3 67%", "20.00", "4 (not enough cells)"):
        assert cell in v1, v1
    assert run_cli(s, "compare", "--criterion", "nope").returncode == 1
    assert run_cli(s, "compare", "v1").returncode == 2

    missing = run_cli(s, "compare", "nope-1", "nope-2")
    assert missing.returncode == 1
    assert "no judge results under 'nope-1' or 'nope-2'" in missing.stderr
    assert "v1, v2" in missing.stderr and "Traceback" not in missing.stderr

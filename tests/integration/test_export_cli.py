"""`judgeflow export` on the real broker: the scenario's adjudications joined with the judge
results they verified, as CSV and as Parquet (read back with the stdlib and pyarrow); no
note text or comments; a bad path is a one-line error."""

from __future__ import annotations

import csv
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from agents.calibrate.export import COLUMNS
from schemas.calibration import Adjudication
from tests.helpers import collect, produce, test_settings, values
from tests.integration.test_calibrate_worker import load_scenario
from tests.integration.test_cli import run_cli
from tests.unit.agents.calibrate import scenario as sc

pytestmark = pytest.mark.integration


async def test_export_csv_and_parquet(bootstrap: str, tmp_path: Path) -> None:
    s = test_settings(bootstrap)
    await load_scenario(bootstrap, s, bad=b"not json")
    blind: Adjudication = sc.adjudication("c5", "yes", "n_a", "both", minute=40).model_copy(
        update={"review_mode": "blind", "review_slot": 2, "adjudicator": "rev-2",
                "result_id": "r-c5-v1-10", "adjudication_id": "a-c5",
                "comment": "CHART TEXT QUOTED HERE"})
    await produce(bootstrap, s.topics.adjudications,
                  [(blind.key.encode(), blind.model_dump_json().encode())])

    out = run_cli(s, "export", str(tmp_path / "adj.csv"))
    assert out.returncode == 0, out.stderr
    # the scenario's five, its stray (another task: exported as it is) and c5's blind one
    assert "wrote 7 adjudication(s)" in out.stderr and "1 malformed" in out.stderr
    with (tmp_path / "adj.csv").open(newline="") as f:
        table = list(csv.DictReader(f))
    assert tuple(table[0]) == COLUMNS
    c5 = next(r for r in table if r["cell"] == "T|c5|f")
    assert (c5["review_mode"], c5["review_slot"], c5["adjudicator"]) == ("blind", "2", "rev-2")
    assert (c5["joined_by"], c5["prompt_version"], c5["suggested_answer"]) == (
        "result_id", "v1", '"yes"')
    # an adjudication without result_id: joined with its cell's live result
    c1 = next(r for r in table if r["cell"] == "T|c1|f")
    assert (c1["joined_by"], c1["review_mode"], c1["review_slot"]) == ("cell", "verify", "1")
    assert "CHART TEXT" not in (tmp_path / "adj.csv").read_text()

    out = run_cli(s, "export", str(tmp_path / "adj.parquet"))
    assert out.returncode == 0, out.stderr
    parquet = pq.read_table(tmp_path / "adj.parquet").to_pylist()
    assert [r["cell"] for r in parquet] == [r["cell"] for r in table]
    assert next(r for r in parquet if r["cell"] == "T|c5|f")["review_slot"] == 2

    # each export was audited before its file was written: the patients, no text
    events = values(await collect(bootstrap, s.topics.audit, until=2))
    assert [e["action"] for e in events] == ["export", "export"]
    assert set(events[0]["patient_ids"]) == {r["patient_id"] for r in table}
    assert events[0]["records"] == 7 and events[0]["route"] == "judgeflow export"
    assert "CHART TEXT" not in str(events)

    bad = run_cli(s, "export", str(tmp_path / "no" / "such" / "x.csv"))
    assert bad.returncode == 2 and "no such directory" in bad.stderr
    assert "Traceback" not in bad.stderr

"""The README's reading of the demo summary, checked against the sample's ground truth and the
parser: jobs exceed cells by kind for exactly the reasons and counts it gives."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import orjson
import pytest

from cli.main import main
from streams.sampledata import DATA_DIR

README = Path(__file__).resolve().parents[3] / "README.md"
KINDS = ("disagreement", "type_drift", "low_confidence")


def test_jobs_by_kind_exceed_cells_by_kind_as_the_readme_says() -> None:
    truth = [orjson.loads(line) for line in (Path(DATA_DIR) / "truth.jsonl").read_bytes()
             .splitlines()]
    jobs = sum(len(t["job_kinds"]) for t in truth)
    cells = sum(t["outcome"] in KINDS for t in truth)
    missing_with_job = sum(t["outcome"] == "agent_missing" and bool(t["job_kinds"])
                           for t in truth)
    redecided = Counter(k for t in truth if t["outcome"] == "agreement" for k in t["job_kinds"])
    assert jobs - cells == missing_with_job + sum(redecided.values())
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert f"({jobs} jobs, but {cells} cells" in text
    assert f"({missing_with_job} of the " in text
    assert re.search(rf"\({sum(redecided.values())} cells: one disagreement, one type drift, "
                     r"one low confidence\)", text)
    assert sorted(redecided.values()) == [1, 1, 1]


def test_global_options_go_before_the_command() -> None:
    with pytest.raises(SystemExit) as exc:
        main(["tail", "t", "--bootstrap-servers", "h:1"])
    assert exc.value.code == 2
    assert "judgeflow --bootstrap-servers kafka-1:9092 tail" in README.read_text()

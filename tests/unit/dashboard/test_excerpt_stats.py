from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agents.context.charts import ChartStore
from dashboard.excerpt import cut, evidence_excerpts
from dashboard.stats import calibration_rows, cost_by_version

NOTE = "0123456789" * 10


@pytest.mark.parametrize(("offsets", "context", "expected"), [
    ((20, 25), 5, ("56789", "01234", "56789", True, True)),
    ((0, 3), 5, ("", "012", "34567", False, True)),
    ((95, 500), 5, ("01234", "56789", "", True, False)),  # end clamped to the note
    (None, 5, ("0123456789", "", "", False, True)),
    ((200, 210), 5, ("0123456789", "", "", False, True)),  # start past the end: no highlight
])
def test_cut(offsets: tuple[int, int] | None, context: int,
             expected: tuple[str, str, str, bool, bool]) -> None:
    got = cut(NOTE, offsets, context)
    assert (got["before"], got["highlight"], got["after"], got["clipped_start"],
            got["clipped_end"]) == expected


def test_excerpts_read_through_the_chart_store_and_refuse_escaping_ids(tmp_path: Path) -> None:
    (tmp_path / "charts" / "p1").mkdir(parents=True)
    (tmp_path / "charts" / "p1" / "n1.txt").write_text("Patient has <b>type 2</b> diabetes.")
    (tmp_path / "secret.txt").write_text("outside")
    store = ChartStore(tmp_path / "charts")
    pointers: list[Any] = [
        {"note_id": "n1", "what_to_look_for": "dx", "offsets": [12, 25]},
        {"note_id": "../secret", "what_to_look_for": "x", "offsets": None},
        {"note_id": "n1", "what_to_look_for": "y", "offsets": [True, 3]},
        "junk",
    ]
    got = evidence_excerpts(store, "p1", pointers)
    assert got[0]["note"]["highlight"] == "<b>type 2</b>"
    assert got[1]["note"] is None
    assert got[2]["offsets"] is None and got[2]["note"]["highlight"] == ""
    assert len(got) == 3
    assert evidence_excerpts(store, "../..", pointers[:1])[0]["note"] is None
    assert evidence_excerpts(store, "p1", "not a list") == []


def test_cost_and_cache_share_per_prompt_version() -> None:
    results: list[dict[str, Any]] = [
        {"prompt_version": "v1", "status": "ok", "usage": {
            "input_tokens": 100, "cache_read_input_tokens": 300,
            "cache_creation_input_tokens": 0, "cost_usd": 0.01}},
        {"prompt_version": "v1", "status": "flagged", "usage": {
            "input_tokens": 100, "cache_read_input_tokens": 100, "cost_usd": 0.02}},
        {"prompt_version": "v2", "status": "fallback", "usage": {}},
        {"status": "ok", "usage": "broken"},
    ]
    table = {r["prompt_version"]: r for r in cost_by_version(results)}
    assert table["v1"]["results"] == 2
    assert table["v1"]["cost_usd"] == pytest.approx(0.03)
    assert table["v1"]["cache_share"] == pytest.approx(400 / 600)
    assert table["v1"]["statuses"] == {"ok": 1, "flagged": 1}
    assert table["v2"]["cache_share"] is None
    assert set(table["v2"]) == {"prompt_version", "results", "cost_usd", "statuses",
                                "cache_share"}
    assert set(table) == {"v1", "v2", "?"}


def test_calibration_rows_read_calibration_records() -> None:
    record = {"calibration_id": "x", "task_id": "t", "field_id": "b", "prompt_version": "v1",
              "cells_judged": 12, "cells_adjudicated": 10,
              "answer_accuracy": {"hits": 9, "n": 10, "rate": 0.9},
              "classification_kappa": 0.8, "fallback": {"hits": 1, "n": 12, "rate": 1 / 12},
              "cost_usd": 0.12, "confusion": {"labels": [], "counts": []}}
    rows = calibration_rows([record, {"task_id": "t", "field_id": "a", "prompt_version": "v2",
                                      "answer_accuracy": {"hits": 0, "n": 0, "rate": None},
                                      "classification_kappa": None}])
    assert [r["field_id"] for r in rows] == ["a", "b"]
    assert rows[1] == {"task_id": "t", "field_id": "b", "prompt_version": "v1", "judged": 12,
                       "n": 10, "accuracy": 0.9, "accuracy_counts": "9/10",
                       "confusion": {"labels": [], "tokens": [], "counts": []}, "kappa": 0.8,
                       "fallback": pytest.approx(1 / 12), "cost_usd": 0.12,
                       # a record from before issue 27: no intervals, AC1, modes or baseline
                       "accuracy_ci95": None, "kappa_ci95": None, "ac1": None,
                       "modes": None, "human": None, "enough": True}
    bad = calibration_rows([{**record, "confusion": {"labels": ["a"], "counts": [[1, 2]]}}])
    assert bad[0]["confusion"] is None  # a malformed matrix is not drawn
    assert rows[0]["accuracy"] is None and rows[0]["kappa"] is None
    assert calibration_rows([record], min_cells=11)[0]["enough"] is False


def test_calibration_rows_carry_the_intervals_modes_and_the_human_baseline() -> None:
    fig = {"hits": 3, "n": 4, "rate": 0.75, "ci95": [0.3, 0.95]}
    mode = {"cells_adjudicated": 4, "answer_accuracy": fig, "classification_agreement": fig,
            "classification_kappa": 0.5, "kappa_ci95": [0.1, 0.9], "ac1": 0.6}
    record = {"task_id": "t", "field_id": "b", "prompt_version": "v1", "cells_adjudicated": 8,
              "answer_accuracy": fig, "kappa_ci95": [0.2, 0.8], "ac1": 0.7,
              "by_review_mode": {"blind": mode, "verify": mode, "verify_minus_blind": {
                  "estimate": 0.0, "ci95": [-0.5, 0.5]}},
              "human_agreement": {"n": 4, "percent": fig, "kappa": 0.4, "kappa_ci95": [0, 0.8],
                                  "ac1": 0.5, "ac1_ci95": [0.1, 0.9]}}
    [row] = calibration_rows([record], min_cells=30)
    assert row["accuracy_ci95"] == [0.3, 0.95] and row["ac1"] == 0.7 and not row["enough"]
    assert row["modes"]["blind"]["accuracy"] == {"rate": 0.75, "counts": "3/4",
                                                 "ci95": [0.3, 0.95]}
    assert row["modes"]["difference"] == {"estimate": 0.0, "ci95": [-0.5, 0.5]}
    assert row["human"]["n"] == 4 and row["human"]["ac1_ci95"] == [0.1, 0.9]


def test_the_confusion_matrix_names_the_reviewers_by_agent_id() -> None:
    tokens = ["agent_a_error", "agent_b_error", "guideline_gap", "true_ambiguity", "n_a"]
    counts = [[0, 1, 0, 0, 0]] + [[0] * 5] * 4
    record = {"task_id": "t", "field_id": "b", "prompt_version": "v1",
              "confusion": {"labels": tokens, "counts": counts},
              "agents": ["default", "skeptical", "third"]}
    matrix = calibration_rows([record])[0]["confusion"]
    assert matrix["labels"] == ["error of default", "error of skeptical", "guideline gap",
                                "true ambiguity", "n/a (not a disagreement)"]
    assert matrix["tokens"] == tokens and matrix["counts"] == counts
    older = calibration_rows([{**record, "agents": None}])[0]["confusion"]  # before `agents`
    assert older["labels"][:2] == ["error of the first agent", "error of the second agent"]

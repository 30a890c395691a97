"""The export's rows: one per adjudication, superseded ones flagged, never a comment."""

from __future__ import annotations

from agents.calibrate.export import COLUMNS, rows
from tests.unit.agents.calibrate import scenario as sc


def test_superseded_decisions_are_kept_and_flagged_and_comments_left_out() -> None:
    first = sc.adjudication("c1", "no", "n_a", None, minute=20).model_copy(
        update={"adjudication_id": "a1", "comment": "quoting the chart"})
    later = sc.adjudication("c1", "yes", "n_a", None, minute=30).model_copy(
        update={"adjudication_id": "a2", "supersedes": "a1", "result_id": "r-c1-v2-10"})
    # v2 is a replay: its results name the live result they supersede
    results = [r.model_copy(update={"supersedes": f"r-{r.patient_id}-v1-10"})
               if r.prompt_version == "v2" else r for r in sc.results()]
    out = rows([first, later, later], results)  # a duplicate delivery counts once
    assert [(r["adjudication_id"], r["superseded"]) for r in out] == [("a1", True),
                                                                      ("a2", False)]
    assert out[1]["prompt_version"] == "v2" and out[1]["joined_by"] == "result_id"
    assert out[0]["prompt_version"] == "v1" and out[0]["joined_by"] == "cell"
    assert all(set(r) == set(COLUMNS) for r in out)
    assert "quoting" not in repr(out)

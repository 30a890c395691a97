from __future__ import annotations

from typing import Any

import pytest

from dashboard.rows import debrief_cards
from dashboard.window import (
    CALIBRATION,
    EVALUATIONS,
    JOBS,
    RESULTS,
    Window,
    record_id,
)


def result(rid: str, **kw: Any) -> dict[str, Any]:
    base = {"result_id": rid, "job_id": f"job-{rid}", "task_id": "t1", "patient_id": "p1",
            "field_id": "f1", "kind": "disagreement", "status": "ok", "prompt_version": "v1",
            "analysis": {"suggested_answer": "yes", "judge_confidence": "high",
                         "classification_hint": "agent_b_error", "reasoning": "r"}}
    return {**base, **kw}


@pytest.mark.parametrize(("stream", "value", "expected"), [
    (RESULTS, {"result_id": "r1"}, "r1"),
    (RESULTS, {"result_id": 5}, None),
    (JOBS, {"job_id": "j1"}, "j1"),
    (EVALUATIONS, {"evaluation_id": "e1", "request_id": "q1"}, "e1"),
    (EVALUATIONS, {"request_id": "q1"}, "q1"),
    (CALIBRATION, {"calibration_id": "c1"}, "c1"),
    (CALIBRATION, {"calibration_id": "c1", "task_id": "t", "field_id": "f",
                   "prompt_version": "v"}, "t|f|v"),
    (CALIBRATION, {"task_id": "t", "field_id": "f", "prompt_version": "v"}, "t|f|v"),
    (CALIBRATION, {}, None),
])
def test_record_ids(stream: str, value: dict[str, Any], expected: str | None) -> None:
    assert record_id(stream, value) == expected


def test_newest_first_and_a_repeated_id_replaces_and_becomes_newest() -> None:
    w = Window(limit=10)
    for rid in ("a", "b", "c"):
        w.add(RESULTS, result(rid))
    w.add(RESULTS, result("a", status="fallback"))
    rows = w.rows()
    assert [r["id"] for r in rows] == ["a", "c", "b"]
    assert rows[0]["status"] == "fallback"


def test_the_window_is_bounded_per_stream_and_drops_the_oldest() -> None:
    w = Window(limit=3)
    for i in range(5):
        w.add(RESULTS, result(f"r{i}"))
        w.add(JOBS, {"job_id": f"j{i}"})
    assert [r["id"] for r in w.rows()] == ["r4", "r3", "r2"]
    assert len(w) == 6
    with pytest.raises(ValueError):
        Window(limit=0)


@pytest.mark.parametrize("bad", [None, [], "x", 3, {"no": "id"}])
def test_non_objects_and_records_without_id_are_ignored(bad: Any) -> None:
    w = Window()
    assert w.add(RESULTS, bad) is None
    assert w.add("unknown-stream", result("r")) is None
    assert len(w) == 0


@pytest.mark.parametrize(("filters", "expected"), [
    ({}, ["r4", "r3", "r2", "r1", "r0"]),
    ({"status": "flagged"}, ["r3"]),
    ({"kind": "type_drift"}, ["r4", "r2", "r0"]),
    ({"kind": "type_drift", "criterion": "f2"}, ["r4", "r0"]),
    ({"prompt_version": "v2", "task": "t1"}, ["r1"]),
    ({"status": ""}, ["r4", "r3", "r2", "r1", "r0"]),  # an empty filter is no filter
    ({"unknown": "x"}, ["r4", "r3", "r2", "r1", "r0"]),
    ({"status": "nope"}, []),
])
def test_filters(filters: dict[str, str], expected: list[str]) -> None:
    w = Window()
    w.add(RESULTS, result("r0", kind="type_drift", field_id="f2"))
    w.add(RESULTS, result("r1", prompt_version="v2"))
    w.add(RESULTS, result("r2", kind="type_drift"))
    w.add(RESULTS, result("r3", status="flagged"))  # a status this code has never heard of
    w.add(RESULTS, result("r4", kind="type_drift", field_id="f2"))
    assert [r["id"] for r in w.rows(filters)] == expected
    assert w.facets()["status"] == ["flagged", "ok"]
    assert [r["id"] for r in w.rows(limit=2)] == ["r4", "r3"]


def test_a_row_joins_both_agents_answers_from_the_job() -> None:
    w = Window()
    w.add(RESULTS, result("r1"))
    assert w.rows()[0]["answers"] == []  # the job may not have arrived (or was dropped)
    w.add(JOBS, {"job_id": "job-r1", "answers": [
        {"agent_id": "default", "answer": True, "confidence": "high"},
        {"agent_id": "skeptical", "answer": "no", "confidence": 0.3}, "junk"]})
    row = w.row("r1")
    assert row is not None
    assert row["answers"] == [{"agent_id": "default", "answer": True, "confidence": "high"},
                              {"agent_id": "skeptical", "answer": "no", "confidence": 0.3}]
    assert (row["suggested_answer"], row["confidence"], row["classification_hint"]) == (
        "yes", "high", "agent_b_error")
    assert w.row("missing") is None


def test_a_result_with_a_broken_analysis_still_makes_a_row() -> None:
    w = Window()
    w.add(RESULTS, {"result_id": "r", "analysis": "not an object", "status": 7})
    (row,) = w.rows()
    assert row["suggested_answer"] is None and row["status"] == "7"


def test_debrief_cards_put_safety_breaches_first() -> None:
    evals: list[dict[str, Any]] = [
        {"evaluation_id": "a"}, {"evaluation_id": "b", "safety_breach": {"kind": "x"}},
        {"evaluation_id": "c"}, {"evaluation_id": "d", "safety_breach": {"kind": "y"}}]
    assert [e["evaluation_id"] for e in debrief_cards(evals)] == ["b", "d", "a", "c"]

"""The queue is a durable work list (issue 18 item 1): a pending cell is never dropped from
the window, however many there are and however old; the window bounds decided and
superseded rows only. And a replay under a candidate prompt version does not take over the
reviewers' queue: each cell shows its live result unless a prompt_version filter asks."""

from __future__ import annotations

from typing import Any

from dashboard.decided import Decisions
from dashboard.queue import items
from dashboard.window import JOBS, RESULTS, Window


def result(rid: str, patient: str, **kw: Any) -> dict[str, Any]:
    return {"result_id": rid, "job_id": f"job-{patient}", "task_id": "t", "patient_id": patient,
            "field_id": "f", "kind": "disagreement", "status": "ok", "prompt_version": "v1",
            "judged_at": f"2026-12-01T08:{int(patient[1:]) % 60:02d}:00Z",
            "analysis": {"suggested_answer": "yes"}, **kw}


def decide(decisions: Decisions, patient: str) -> None:
    decisions.add({"task_id": "t", "patient_id": patient, "field_id": "f",
                   "adjudicated_at": "2026-12-01T09:00:00Z", "adjudication_id": patient})


def test_pending_cells_outlive_the_window_and_the_oldest_stay_first() -> None:
    w, decisions = Window(limit=100), Decisions()
    w.decided = decisions.decided
    for i in range(1000):
        w.add(JOBS, {"job_id": f"job-p{i}", "answers": [], "normalized": []})
        w.add(RESULTS, result(f"r{i}", f"p{i}"))
    rows, total = items(w, decisions, state="pending", limit=10)
    assert total == 1000 and rows[0]["patient_id"] == "p0"  # the oldest: first, not dropped
    assert w.get(JOBS, "job-p0") is not None  # its agents' answers too
    assert w.pending_beyond_limit() == 900
    for i in range(1000):  # decided rows are what the window forgets
        decide(decisions, f"p{i}")
    for i in range(1000, 1300):
        w.add(JOBS, {"job_id": f"job-p{i}", "answers": [], "normalized": []})
        w.add(RESULTS, result(f"r{i}", f"p{i}"))
    _, pending = items(w, decisions, state="pending")
    _, decided = items(w, decisions, state="decided")
    assert pending == 300 and decided < 100
    assert len(w.values(RESULTS)) <= 300 + 100 + 10


def test_a_replay_does_not_take_over_the_queue() -> None:
    w, decisions = Window(), Decisions()
    w.add(RESULTS, result("live", "p1", prompt_version="v1"))
    w.add(RESULTS, result("cand", "p1", prompt_version="v2-candidate", supersedes="live",
                          analysis={"suggested_answer": "no"}))
    rows, total = items(w, decisions)
    assert total == 1 and rows[0]["result_id"] == "live" and rows[0]["series"] == "live"
    assert rows[0]["suggested_answer"] == "yes"
    rows, _ = items(w, decisions, {"prompt_version": "v2-candidate"})
    assert [r["result_id"] for r in rows] == ["cand"] and rows[0]["series"] == "replay"
    w.add(RESULTS, result("only-replay", "p2", supersedes="gone"))  # its live one is unknown
    assert {r["result_id"] for r in items(w, decisions)[0]} == {"live", "only-replay"}


def test_the_queue_names_the_hints_agent_in_the_vocabulary_a_save_accepts() -> None:
    w = Window()
    w.add(RESULTS, result("r", "p1", agents=["default", "skeptical"],
                          analysis={"suggested_answer": "yes",
                                    "classification_hint": "agent_b_error"}))
    row = items(w, Decisions())[0][0]
    assert (row["classification_hint"], row["error_agent"]) == ("agent_b_error", "skeptical")


def test_jobs_read_before_their_results_are_kept_for_pending_cells() -> None:
    w, decisions = Window(limit=10), Decisions()
    w.decided = decisions.decided
    for i in range(50):  # the jobs topic read ahead of the results topic
        w.add(JOBS, {"job_id": f"job-p{i}", "task_id": "t", "patient_id": f"p{i}",
                     "field_id": "f", "answers": [], "normalized": []})
    decide(decisions, "p49")
    for i in range(50):
        w.add(RESULTS, result(f"r{i}", f"p{i}"))
    assert w.get(JOBS, "job-p0") is not None and items(w, decisions)[1] == 49
    assert len(w.values(JOBS)) >= 49

"""The demo's tables: list answers whole, reviewers by agent id, no type-drift series in the
calibration table, and a pointer at ``--dashboard`` (issue 16)."""

from __future__ import annotations

import io
from typing import Any

from agents.settings import Settings
from tools.demo.report import answer_text, correct_text, report
from tools.demo.tally import Seen


def result(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "patient_id": "P001", "field_id": "meds", "kind": "disagreement", "status": "ok",
        "task_id": "t", "job_id": "j1", "prompt_version": "judge-v3+abc",
        "analysis": {"suggested_answer": ["metformin", "insulin glargine", "lisinopril"],
                     "agent_correctness": "agent_b", "judge_confidence": "high"},
        "agents": ["default", "skeptical"], "correct_agents": ["skeptical"],
        "usage": {"cost_usd": 0.0, "llm_calls": 0}}
    return {**base, **over}


def test_a_list_answer_is_shown_whole() -> None:
    assert answer_text(["metformin", "insulin glargine", "lisinopril"]) == (
        "[metformin, insulin glargine, lisinopril]")
    assert answer_text(None) == "null" and answer_text(True) == "true"


def test_reviewers_are_named_by_agent_id() -> None:
    assert correct_text(result()) == "skeptical"
    assert correct_text(result(correct_agents=[])) == "neither"
    older = result(correct_agents=None, agents=None)
    assert correct_text(older) == "agent_b"  # an older result keeps its label
    labelled = result(correct_agents=None)
    assert correct_text(labelled) == "skeptical"


def calibration(version: str) -> dict[str, Any]:
    figure = {"hits": 1, "n": 1, "rate": 1.0}
    return {"field_id": "meds", "prompt_version": version, "cells_judged": 1,
            "cells_adjudicated": 1, "answer_accuracy": figure, "classification_kappa": None,
            "fallback": {"hits": 0, "n": 1, "rate": 0.0}}


def test_the_calibration_table_leaves_type_drift_out() -> None:
    seen = Seen()
    seen.results["j1"] = result()
    seen.calibration["t|meds|judge-v3+abc"] = calibration("judge-v3+abc")
    seen.calibration["t|meds|typedrift-v1+def"] = calibration("typedrift-v1+def")
    out = io.StringIO()
    report(seen, Settings(), out)
    text = out.getvalue()
    assert "[metformin, insulin glargine, lisinopril]" in text
    assert "judge-v3+abc" in text and "typedrift-v1" not in text
    assert "agent_b" not in text and "skeptical" in text

"""The page names reviewers by agent id: the queue's classification hint and the cell's
correctness say ``skeptical``, not ``agent_b`` (older results keep their labels)."""

from __future__ import annotations

from typing import Any

from dashboard.window import correctness, triage_row


def result(**over: Any) -> dict[str, Any]:
    return {"result_id": "r1", "analysis": {"classification_hint": "agent_b_error",
                                            "agent_correctness": "agent_a"},
            "agents": ["default", "skeptical", "third"], "correct_agents": ["default", "third"],
            **over}


def test_the_queue_row_names_the_blamed_agent() -> None:
    row = triage_row(result(), None)
    assert row["classification_hint"] == "skeptical_error"
    assert row["agents"] == ["default", "skeptical", "third"]
    assert triage_row(result(agents=None), None)["classification_hint"] == "agent_b_error"


def test_the_cell_names_the_agents_found_right() -> None:
    assert correctness(result()) == "default+third"
    assert correctness(result(correct_agents=None)) == "default"
    assert correctness(result(correct_agents=None, agents=None)) == "agent_a"

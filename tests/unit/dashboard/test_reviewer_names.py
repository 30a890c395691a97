"""The page names reviewers by agent id: the cell's correctness says ``skeptical``, not
``agent_b``; the queue row keeps the wire token a tool posts back, with the ids beside it
(older results: the job's agent ids) for the page to name it."""

from __future__ import annotations

from typing import Any

from dashboard.rows import correctness, triage_row

JOB = {"answers": [{"agent_id": "default", "answer": "a"}, {"agent_id": "skeptical"}]}


def result(**over: Any) -> dict[str, Any]:
    return {"result_id": "r1", "analysis": {"classification_hint": "agent_b_error",
                                            "agent_correctness": "agent_a"},
            "agents": ["default", "skeptical", "third"], "correct_agents": ["default", "third"],
            **over}


def test_the_queue_row_carries_the_wire_token_and_the_agent_ids() -> None:
    row = triage_row(result(), None)
    assert row["classification_hint"] == "agent_b_error"
    assert row["agents"] == ["default", "skeptical", "third"]
    # an older result without ``agents``: the ids come from its job's answers
    assert triage_row(result(agents=None), JOB)["agents"] == ["default", "skeptical"]
    assert triage_row(result(agents=None), None)["agents"] == []


def test_the_cell_names_the_agents_found_right() -> None:
    assert correctness(result()) == "default+third"
    assert correctness(result(correct_agents=None)) == "default"
    assert correctness(result(correct_agents=None, agents=None), JOB) == "default"
    assert correctness(result(correct_agents=None, agents=None)) == "agent_a"

"""The demo's blind audit and second reviewer, on the sample's adjudications (dev only).

The sample has one synthetic reviewer's decision per adjudicated cell. The demo uses the
same audit plan as its review page (:data:`DEMO_BLIND`, :data:`DEMO_DOUBLE`): a decision of a
blind cell is sent with ``review_mode: blind``, and a double-review cell also gets a decision
by a second synthetic reviewer (``review_slot: 2``). That reviewer is made up so that the
human baseline has something to measure: it agrees with the first except on the cells whose
own draw is below :data:`DISAGREE`, where it takes another agent's answer (the cell's
disagreement) and the classification that goes with it. The figures it yields show the
mechanism, not how well two clinicians agree.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import orjson

from dashboard.audit import AuditPlan, draw
from schemas.chart_review import cell_key

DEMO_BLIND, DEMO_DOUBLE = 0.3, 0.2
#: Share of double-review cells on which the made-up second reviewer disagrees.
DISAGREE = 0.25
SECOND = "synthetic-reviewer-2"
FLIP = {"agent_a_error": "agent_b_error", "agent_b_error": "agent_a_error"}
WHO = {"agent_a": "agent_b", "agent_b": "agent_a"}


def agent_answers(lines: list[bytes]) -> dict[str, list[Any]]:
    """Cell key -> the agents' raw answers, in the sample's order."""
    out: dict[str, list[Any]] = {}
    for line in lines:
        if line.strip():
            a = orjson.loads(line)
            out.setdefault(cell_key(a["task_id"], a["patient_id"], a["field_id"]), []).append(
                a.get("answer"))
    return out


def second_review(first: dict[str, Any], answers: list[Any]) -> dict[str, Any]:
    cell = cell_key(first["task_id"], first["patient_id"], first["field_id"])
    when = datetime.fromisoformat(str(first["adjudicated_at"]).replace("Z", "+00:00"))
    second = {**first, "adjudicator": SECOND, "review_slot": 2,
              "adjudicated_at": (when + timedelta(days=1)).isoformat()}
    others = [a for a in answers if orjson.dumps(a) != orjson.dumps(first["final_answer"])]
    if draw(cell, b"judgeflow-demo-second") < DISAGREE and others:
        klass = first.get("classification")
        second.update(final_answer=others[0],
                      classification=FLIP.get(str(klass), "true_ambiguity"),
                      agent_correctness=WHO.get(str(first.get("agent_correctness")),
                                                first.get("agent_correctness")))
    return second


def audited(lines: list[bytes], answers: dict[str, list[Any]],
            plan: AuditPlan | None = None) -> list[bytes]:
    """The sample's adjudication lines with their review mode and slot, plus the second
    reviewer's decision of every double-review cell."""
    plan = plan or AuditPlan(DEMO_BLIND, DEMO_DOUBLE)
    out = []
    for line in lines:
        if not line.strip():
            continue
        first = orjson.loads(line)
        cell = cell_key(first["task_id"], first["patient_id"], first["field_id"])
        first.update(review_mode=plan.mode(cell), review_slot=1)
        out.append(orjson.dumps(first))
        if plan.slots(cell) == 2:
            out.append(orjson.dumps(second_review(first, answers.get(cell, []))))
    return out

"""The rows of ``judgeflow export``: every adjudication joined with the judge result it
verified, flat, for analysis outside judgeflow (pure; docs/calibration.md, "Export").

One row per adjudication (superseded ones too: ``superseded`` says so, so an analysis can
keep the latest decision per cell and slot, as calibration does). The result is the one the
adjudication names (``result_id``); an older adjudication without it is joined with its
cell's live result (the first result of its job), and ``joined_by`` says which. No note text
and no reviewer comment (free text may quote the chart): ids, labels and answers only.
JSON values (answers, lists) are written as canonical JSON text.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from schemas.calibration import Adjudication
from schemas.chart_review import JudgeResult
from schemas.ids import canonical_json

COLUMNS = (
    "adjudication_id", "cell", "task_id", "patient_id", "field_id", "adjudicator",
    "adjudicated_at", "review_mode", "review_slot", "final_answer", "classification",
    "error_agent", "agent_correctness", "correct_agents", "decision", "supersedes",
    "superseded", "result_id", "joined_by", "prompt_version", "provider", "model", "status",
    "kind", "suggested_answer", "classification_hint", "judge_confidence",
    "judge_agent_correctness", "judge_correct_agents", "agents", "judged_at", "cost_usd")


def _json(value: Any) -> str | None:
    return None if value is None else canonical_json(value)


def rows(adjudications: Iterable[Adjudication], results: Iterable[JudgeResult]
         ) -> list[dict[str, Any]]:
    by_id: dict[str, JudgeResult] = {}
    live: dict[str, JudgeResult] = {}
    for res in results:
        by_id[res.result_id] = res
        old = live.get(res.key)
        if not res.supersedes and (old is None or old.judged_at <= res.judged_at):
            live[res.key] = res
    adjs = list({a.adjudication_id or canonical_json(a.model_dump(mode="json")): a
                 for a in adjudications}.values())
    replaced = {a.supersedes for a in adjs if a.supersedes}
    out = []
    for a in sorted(adjs, key=lambda x: (x.key, x.adjudicated_at)):
        r: JudgeResult | None = by_id.get(a.result_id) if a.result_id else None
        joined = "result_id" if r is not None else None
        if r is None and a.result_id is None and a.key in live:
            r, joined = live[a.key], "cell"
        out.append({
            "adjudication_id": a.adjudication_id, "cell": a.key, "task_id": a.task_id,
            "patient_id": a.patient_id, "field_id": a.field_id, "adjudicator": a.adjudicator,
            "adjudicated_at": a.adjudicated_at.isoformat(),
            "review_mode": a.review_mode or "verify", "review_slot": a.review_slot or 1,
            "final_answer": _json(a.final_answer), "classification": a.classification,
            "error_agent": a.error_agent, "agent_correctness": a.agent_correctness,
            "correct_agents": _json(a.correct_agents), "decision": a.decision,
            "supersedes": a.supersedes,
            "superseded": a.adjudication_id is not None and a.adjudication_id in replaced,
            "result_id": a.result_id or (r.result_id if r else None), "joined_by": joined,
            "prompt_version": r.prompt_version if r else None,
            "provider": r.provider if r else None, "model": r.model if r else None,
            "status": r.status if r else None, "kind": r.kind if r else None,
            "suggested_answer": _json(r.analysis.suggested_answer) if r else None,
            "classification_hint": r.analysis.classification_hint if r else None,
            "judge_confidence": r.analysis.judge_confidence if r else None,
            "judge_agent_correctness": r.analysis.agent_correctness if r else None,
            "judge_correct_agents": _json(r.correct_agents) if r else None,
            "agents": _json(list(r.agents)) if r else None,
            "judged_at": r.judged_at.isoformat() if r else None,
            "cost_usd": r.usage.cost_usd if r else None})
    return out

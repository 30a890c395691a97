"""What the page shows of a record: a queue row of a judge result (with its job's answers),
a job's answers under each agent's own id, who the judge found right, debrief cards. Pure;
values are read defensively (any string is shown as it is, anything else as empty)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from schemas.chart_review import cell_key
from schemas.reviewer_labels import blamed, name_agents


def text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def cell_of(record: Mapping[str, Any]) -> str:
    """The cell key of a result, job or row (its task, patient and criterion), read as every
    value here is: a field that is not a string counts as empty."""
    return cell_key(*(text(record.get(k)) for k in ("task_id", "patient_id", "field_id")))


MAX_QUOTES = 5
MAX_TEXT = 4000


def _quotes(evidence: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in evidence if isinstance(evidence, list) else ():
        if isinstance(item, dict) and len(out) < MAX_QUOTES:
            out.append({"note_id": text(item.get("note_id")),
                        "quote": text(item.get("quote"))[:MAX_TEXT]})
    return out


def job_answers(job: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Each agent's answer under its own id, with its rationale and quotes."""
    if not job:
        return []
    out = []
    for answer in job.get("answers") or ():
        if isinstance(answer, dict):
            out.append({"agent_id": text(answer.get("agent_id")),
                        "answer": answer.get("answer"),
                        "confidence": answer.get("confidence"),
                        "rationale": text(answer.get("rationale"))[:MAX_TEXT],
                        "low_confidence_reason": text(answer.get("low_confidence_reason")),
                        "quotes": _quotes(answer.get("evidence"))})
    return out


def reviewer_ids(result: Mapping[str, Any], job: Mapping[str, Any] | None = None
                 ) -> tuple[str, ...]:
    """The result's reviewer agent ids (``JudgeResult.agents``); for an older result without
    them, the ids of its job's answers (the same order); () when neither says."""
    raw = result.get("agents")
    if isinstance(raw, list) and raw:
        return tuple(text(a) for a in raw)
    answers = job.get("answers") if job else None
    return tuple(text(a.get("agent_id")) for a in answers if isinstance(a, dict)) \
        if isinstance(answers, list) else ()


def correctness(result: Mapping[str, Any], job: Mapping[str, Any] | None = None) -> str | None:
    """Who the judge found right, by agent id: ``correct_agents``, else the named label."""
    named = result.get("correct_agents")
    if isinstance(named, list):
        return "+".join(text(a) for a in named) or "neither"
    raw = result.get("analysis")
    label = raw.get("agent_correctness") if isinstance(raw, dict) else None
    return name_agents(label if isinstance(label, str) else None, reviewer_ids(result, job))


def _brief(answers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a queue row shows of the answers (the detail has the rest)."""
    return [{k: a.get(k) for k in ("agent_id", "answer", "confidence")} for a in answers]


def triage_row(result: Mapping[str, Any], job: Mapping[str, Any] | None) -> dict[str, Any]:
    """One queue row: what a reviewer scans before opening the cell."""
    raw = result.get("analysis")
    analysis: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
    agents = reviewer_ids(result, job)
    return {
        "id": text(result.get("result_id")),
        "task_id": text(result.get("task_id")),
        "patient_id": text(result.get("patient_id")),
        "field_id": text(result.get("field_id")),
        "kind": text(result.get("kind")),
        "status": str(result.get("status", "")),
        "prompt_version": text(result.get("prompt_version")),
        "suggested_answer": analysis.get("suggested_answer"),
        "confidence": analysis.get("judge_confidence"),
        # the wire token (what a tool posts back as ``classification``); screens name it
        # with ``agents`` through schemas.reviewer_labels
        "classification_hint": analysis.get("classification_hint"),
        # the agent the hint blames, by id (the result's own ``error_agent`` when it has one)
        "error_agent": text(result.get("error_agent")) or blamed(
            text(analysis.get("classification_hint")) or None, None, agents),
        "agents": list(agents),
        "answers": _brief(job.get("answers") or []) if job else [],
        "judged_at": text(result.get("judged_at")),
    }


def debrief_cards(evaluations: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Evaluations with a safety breach first (stable: newest first within each group)."""
    items = list(evaluations)
    return [e for e in items if e.get("safety_breach")] + [
        e for e in items if not e.get("safety_breach")]

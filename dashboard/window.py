"""A bounded, de-duplicated, newest-first window of the records the page shows.

Records arrive as decoded JSON objects from four streams. Each stream keeps at most
``limit`` records keyed by its id (a redelivered or replayed record with the same id
replaces the old one and counts as newest). Values are read defensively: other helpers
extend the contracts (a judge status ``"flagged"`` beside ``ok``/``fallback``), so any
string is shown as it is.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from schemas.reviewer_labels import name_agents

RESULTS, JOBS, EVALUATIONS, CALIBRATION = "results", "jobs", "evaluations", "calibration"
STREAMS = (RESULTS, JOBS, EVALUATIONS, CALIBRATION)
#: Query parameter -> the row field it filters on.
FILTERS = {"task": "task_id", "criterion": "field_id", "kind": "kind", "status": "status",
           "prompt_version": "prompt_version"}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def record_id(stream: str, value: Mapping[str, Any]) -> str | None:
    """The de-duplication id of a record, or None when it has none (then it is skipped)."""
    if stream == RESULTS:
        return _text(value.get("result_id")) or None
    if stream == JOBS:
        return _text(value.get("job_id")) or None
    if stream == EVALUATIONS:
        return (_text(value.get("evaluation_id")) or _text(value.get("request_id"))) or None
    # One series per (task, criterion, prompt version): a newer record replaces the older
    # one (its calibration_id changes with its figures).
    parts = [_text(value.get(k)) for k in ("task_id", "field_id", "prompt_version")]
    if any(parts):
        return "|".join(parts)
    return _text(value.get("calibration_id")) or None


@dataclass
class Entry:
    seq: int
    value: dict[str, Any]


class Window:
    """Per stream, the newest ``limit`` records by arrival, keyed by id."""

    def __init__(self, limit: int = 5000) -> None:
        if limit < 1:
            raise ValueError("the window must hold at least one record")
        self.limit = limit
        self._seq = 0
        self._data: dict[str, OrderedDict[str, Entry]] = {s: OrderedDict() for s in STREAMS}

    def add(self, stream: str, value: Any) -> str | None:
        """Store ``value``; return its id (None when it is not an object with an id)."""
        if stream not in self._data or not isinstance(value, dict):
            return None
        rid = record_id(stream, value)
        if rid is None:
            return None
        if stream == JOBS:  # only what the page shows of the agents' whole answers
            normalized = value.get("normalized")
            value = {"job_id": rid, "answers": _answers(value),
                     "normalized": list(normalized) if isinstance(normalized, list) else []}
        items = self._data[stream]
        self._seq += 1
        items.pop(rid, None)
        items[rid] = Entry(self._seq, value)
        while len(items) > self.limit:
            items.popitem(last=False)
        return rid

    def get(self, stream: str, rid: str) -> dict[str, Any] | None:
        items = self._data.get(stream)
        entry = items.get(rid) if items is not None else None
        return entry.value if entry else None

    def values(self, stream: str) -> list[dict[str, Any]]:
        """Newest first."""
        return [e.value for e in reversed(self._data[stream].values())]

    def __len__(self) -> int:
        return sum(len(items) for items in self._data.values())

    def row(self, rid: str) -> dict[str, Any] | None:
        result = self.get(RESULTS, rid)
        return None if result is None else triage_row(result, self.get(JOBS, _text(
            result.get("job_id"))))

    def rows(self, filters: Mapping[str, str] | None = None,
             limit: int | None = None) -> list[dict[str, Any]]:
        """Triage rows, newest first, narrowed by ``filters`` (see :data:`FILTERS`)."""
        wanted = {FILTERS[k]: v for k, v in (filters or {}).items() if k in FILTERS and v}
        out = []
        for entry in reversed(self._data[RESULTS].values()):
            value = entry.value
            if all(str(value.get(f, "")) == v for f, v in wanted.items()):
                out.append(triage_row(value, self.get(JOBS, _text(value.get("job_id")))))
                if limit is not None and len(out) >= limit:
                    break
        return out

    def latest_per_cell(self) -> dict[str, tuple[int, dict[str, Any]]]:
        """Cell key -> (arrival, value) of its newest result (the one a reviewer verifies)."""
        out: dict[str, tuple[int, dict[str, Any]]] = {}
        for entry in self._data[RESULTS].values():
            v = entry.value
            out[f"{_text(v.get('task_id'))}|{_text(v.get('patient_id'))}|"
                f"{_text(v.get('field_id'))}"] = (entry.seq, v)
        return out

    def seq(self, stream: str, rid: str) -> int:
        entry = self._data[stream].get(rid)
        return entry.seq if entry else 0

    def facets(self) -> dict[str, list[str]]:
        """Distinct values of every filter over the window, for the filter menus."""
        seen: dict[str, set[str]] = {k: set() for k in FILTERS}
        for entry in self._data[RESULTS].values():
            for key, field in FILTERS.items():
                value = entry.value.get(field)
                if isinstance(value, str) and value:
                    seen[key].add(value)
        return {k: sorted(v) for k, v in seen.items()}


MAX_QUOTES = 5
MAX_TEXT = 4000


def _quotes(evidence: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for item in evidence if isinstance(evidence, list) else ():
        if isinstance(item, dict) and len(out) < MAX_QUOTES:
            out.append({"note_id": _text(item.get("note_id")),
                        "quote": _text(item.get("quote"))[:MAX_TEXT]})
    return out


def _answers(job: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Each agent's answer under its own id, with its rationale and quotes."""
    if not job:
        return []
    out = []
    for answer in job.get("answers") or ():
        if isinstance(answer, dict):
            out.append({"agent_id": _text(answer.get("agent_id")),
                        "answer": answer.get("answer"),
                        "confidence": answer.get("confidence"),
                        "rationale": _text(answer.get("rationale"))[:MAX_TEXT],
                        "low_confidence_reason": _text(answer.get("low_confidence_reason")),
                        "quotes": _quotes(answer.get("evidence"))})
    return out


def reviewer_ids(result: Mapping[str, Any], job: Mapping[str, Any] | None = None
                 ) -> tuple[str, ...]:
    """The result's reviewer agent ids (``JudgeResult.agents``); for an older result without
    them, the ids of its job's answers (the same order); () when neither says."""
    raw = result.get("agents")
    if isinstance(raw, list) and raw:
        return tuple(_text(a) for a in raw)
    answers = job.get("answers") if job else None
    return tuple(_text(a.get("agent_id")) for a in answers if isinstance(a, dict)) \
        if isinstance(answers, list) else ()


def correctness(result: Mapping[str, Any], job: Mapping[str, Any] | None = None) -> str | None:
    """Who the judge found right, by agent id: ``correct_agents``, else the named label."""
    named = result.get("correct_agents")
    if isinstance(named, list):
        return "+".join(_text(a) for a in named) or "neither"
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
        "id": _text(result.get("result_id")),
        "task_id": _text(result.get("task_id")),
        "patient_id": _text(result.get("patient_id")),
        "field_id": _text(result.get("field_id")),
        "kind": _text(result.get("kind")),
        "status": str(result.get("status", "")),
        "prompt_version": _text(result.get("prompt_version")),
        "suggested_answer": analysis.get("suggested_answer"),
        "confidence": analysis.get("judge_confidence"),
        # the wire token (what a tool posts back as ``classification``); screens name it
        # with ``agents`` through schemas.reviewer_labels
        "classification_hint": analysis.get("classification_hint"),
        "agents": list(agents),
        "answers": _brief(job.get("answers") or []) if job else [],
        "judged_at": _text(result.get("judged_at")),
    }


def debrief_cards(evaluations: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Evaluations with a safety breach first (stable: newest first within each group)."""
    items = list(evaluations)
    return [e for e in items if e.get("safety_breach")] + [
        e for e in items if not e.get("safety_breach")]

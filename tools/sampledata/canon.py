"""A small reference model of the detector rules, used to compute the ground truth.

It is deliberately independent of the real detector (``streams``): the truth file is what the
rules in the sample README say, not what an implementation happens to do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

NO_INFO = "no_info"
LOW_THRESHOLD = 0.5

_TRUE_STR = {"true", "True", "yes", "Yes", "YES", "Y", "y", "1", "present", "positive"}
_FALSE_STR = {"false", "no", "No", "N", "0", "absent", "negative"}
_NO_INFO_STR = {"no_info", "unknown", "not documented", ""}
_DATE_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%m/%d/%Y", "%d %B %Y", "%B %d, %Y")


@dataclass(frozen=True)
class Invalid:
    """An answer that cannot be canonicalised; unequal to every other value."""

    raw: str


def _canon_bool(value: Any) -> Any:
    if value is None:
        return NO_INFO
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return value == 1
    if isinstance(value, str):
        if value in _TRUE_STR:
            return True
        if value in _FALSE_STR:
            return False
        if value in _NO_INFO_STR:
            return NO_INFO
    return Invalid(raw_format(value))


def _canon_enum(value: Any, enum: list[Any]) -> Any:
    if value is None:
        return NO_INFO
    lowered = {str(v).lower(): v for v in enum}
    if isinstance(value, bool) and "yes" in lowered and "no" in lowered:
        return "yes" if value else "no"
    if isinstance(value, str) and value.strip().lower() in lowered:
        return lowered[value.strip().lower()]
    return Invalid(raw_format(value))


def _canon_number(value: Any, unit: str | None) -> Any:
    if value is None:
        return NO_INFO
    if isinstance(value, bool):
        return Invalid(raw_format(value))
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        text = value.strip()
        if text in _NO_INFO_STR:
            return NO_INFO
        if unit and text.endswith(unit):
            text = text[: -len(unit)].strip()
        try:
            return float(text)
        except ValueError:
            pass
    return Invalid(raw_format(value))


def _canon_date(value: Any) -> Any:
    if value is None:
        return NO_INFO
    if isinstance(value, str):
        text = value.strip()
        if text in _NO_INFO_STR:
            return NO_INFO
        for fmt in _DATE_FORMATS:
            try:
                return datetime.strptime(text, fmt).date().isoformat()
            except ValueError:
                continue
    return Invalid(raw_format(value))


def _canon_list(value: Any) -> Any:
    if value is None or value == NO_INFO:
        return NO_INFO
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(sorted({v.strip().lower() for v in value}))
    return Invalid(raw_format(value))


def canonical(value: Any, schema: dict[str, Any]) -> Any:
    """The normalised value of one answer under a criterion's answer_schema."""
    kind = schema["type"]
    if kind == "boolean":
        return _canon_bool(value)
    if kind == "enum":
        return _canon_enum(value, list(schema["enum"]))
    if kind == "number":
        return _canon_number(value, schema.get("unit"))
    if kind == "date":
        return _canon_date(value)
    if kind == "list":
        return _canon_list(value)
    return value.strip().lower() if isinstance(value, str) else Invalid(raw_format(value))


def raw_format(value: Any) -> str:
    """The JSON representation of a raw answer, with list items order-normalised."""
    if isinstance(value, list):
        value = sorted(value, key=orjson.dumps)
    return orjson.dumps(value).decode()


def is_low(confidence: Any) -> bool:
    if isinstance(confidence, str):
        return confidence == "low"
    return float(confidence) < LOW_THRESHOLD


def truth_json(value: Any) -> Any:
    """A canonical value as written to truth.jsonl (lists as sorted lists)."""
    return list(value) if isinstance(value, tuple) else value


@dataclass
class CellState:
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    inputs: tuple[Any, ...] | None = None
    outcome: str | None = None
    jobs: list[str] = field(default_factory=list)


def _decide(answers: list[dict[str, Any]], schema: dict[str, Any]) -> str:
    canon = [canonical(a["answer"], schema) for a in answers]
    if any(c != canon[0] for c in canon):
        return "disagreement"
    if len({raw_format(a["answer"]) for a in answers}) > 1:
        return "type_drift"
    if any(is_low(a["confidence"]) for a in answers):
        return "low_confidence"
    return "agreement"


def simulate(
    events: list[dict[str, Any]], schemas: dict[str, dict[str, Any]], agents: tuple[str, ...]
) -> dict[str, CellState]:
    """Replay events in file order under the detector rules; one state per cell key."""
    seen: set[str] = set()
    cells: dict[str, CellState] = {}
    for ev in events:
        if ev["event_id"] in seen:
            continue
        seen.add(ev["event_id"])
        key = f"{ev['task_id']}|{ev['patient_id']}|{ev['field_id']}"
        st = cells.setdefault(key, CellState())
        prev = st.answers.get(ev["agent_id"])
        if prev is not None and _ts(ev) <= _ts(prev):
            continue
        st.answers[ev["agent_id"]] = ev
        if not all(a in st.answers for a in agents):
            continue
        schema = schemas[ev["field_id"]]
        ordered = [st.answers[a] for a in agents]
        inputs = tuple(
            (a["agent_id"], raw_format(a["answer"]), canonical(a["answer"], schema),
             is_low(a["confidence"]))
            for a in ordered
        )
        if inputs == st.inputs:
            continue
        st.inputs = inputs
        st.outcome = _decide(ordered, schema)
        if st.outcome != "agreement":
            st.jobs.append(st.outcome)
    for st in cells.values():
        if st.outcome is None:
            st.outcome = "agent_missing"
            if any(is_low(a["confidence"]) for a in st.answers.values()):
                st.jobs.append("low_confidence")
    return cells


def _ts(ev: dict[str, Any]) -> datetime:
    return datetime.fromisoformat(ev["emitted_at"].replace("Z", "+00:00"))

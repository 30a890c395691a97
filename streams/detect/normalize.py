"""Canonicalise an agent's raw answer against a criterion's ``answer_schema``. Pure functions.

The canonical value is what "same meaning" is judged on; the *format signature* is what
"same spelling" is judged on. Two answers with equal canonical values and different format
signatures are type drift.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import orjson

from schemas.skill import NO_INFO, AnswerSchema

_TRUE = {"true", "yes", "y", "1", "present", "positive"}
_FALSE = {"false", "no", "n", "0", "absent", "negative"}
_NO_INFO = {"", "no_info", "no info", "unknown", "not documented", "n/a", "na", "none documented"}
_DATE_FORMATS = (
    "%Y-%m-%d", "%Y/%m/%d", "%m/%d/%Y", "%d %B %Y", "%d %b %Y", "%B %d, %Y", "%b %d, %Y",
    "%B %d %Y", "%Y-%m-%dT%H:%M:%S", "%Y%m%d",
)
#: Whole numbers in this range are canonical ints (what orjson writes: i64 and u64).
_INT_MIN, _INT_END = -(2**63), 2**64
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*$")


@dataclass(frozen=True, slots=True)
class Invalid:
    """A raw answer that the schema cannot canonicalise; it equals only the same raw text."""

    raw: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"invalid": self.raw, "reason": self.reason}


def _is_no_info(raw: Any) -> bool:
    return raw is None or (isinstance(raw, str) and raw.strip().lower() in _NO_INFO)


def _canon_bool(raw: Any) -> Any:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, int | float) and raw in (0, 1):
        return bool(raw)
    if isinstance(raw, str):
        text = raw.strip().lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    return None


def _canon_enum(raw: Any, allowed: tuple[Any, ...]) -> Any:
    if isinstance(raw, bool):
        by_bool = {"yes": True, "no": False, "true": True, "false": False}
        for value in allowed:
            if isinstance(value, str) and by_bool.get(value.lower()) is raw:
                return value
        return raw if raw in allowed else None
    if isinstance(raw, str):
        text = raw.strip().lower()
        for value in allowed:
            if isinstance(value, str) and value.lower() == text:
                return value
        boolean = _canon_bool(raw)
        if boolean is not None:
            return _canon_enum(boolean, allowed)
    return None


def _squash(text: str) -> str:
    return text.replace(" ", "").lower()


def _canon_number(raw: Any, unit: str | None) -> Any:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        value = float(raw)
    elif isinstance(raw, str):
        match = _NUMBER.match(raw.replace(",", ""))
        if not match:
            return None
        suffix = match.group(2)
        if suffix and (unit is None or _squash(suffix) != _squash(unit)):
            return None
        value = float(match.group(1))
    else:
        return None
    if not math.isfinite(value):
        return None
    if value.is_integer() and _INT_MIN <= value < _INT_END:
        return int(value)
    # a larger whole number stays a float: as an int it would be outside the 64 bits JSON
    # numbers are written with here (orjson), and every decision of its cell would fail
    return round(value, 6)


def _canon_date(raw: Any) -> Any:
    if not isinstance(raw, str):
        return None
    text = " ".join(raw.strip().split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).date().isoformat()
        except ValueError:
            continue
    try:
        return date.fromisoformat(text).isoformat()
    except ValueError:
        return None


def _canon_list(raw: Any, allowed: tuple[Any, ...]) -> Any:
    if not isinstance(raw, list | tuple):
        if isinstance(raw, str) and raw.strip():
            raw = [part for part in re.split(r"[;,]", raw) if part.strip()]
        else:
            return None
    items = []
    for item in raw:
        canon = _canon_enum(item, allowed) if allowed else _open_item(item)
        if canon is None:
            return None
        if canon != "":
            items.append(canon)
    return tuple(sorted(set(items), key=str))


def _open_item(item: Any) -> str | None:
    """An item of an open list (no enum): a string, whitespace collapsed and lower-cased."""
    if isinstance(item, bool):
        return "true" if item else "false"
    if isinstance(item, int | float):
        number = _canon_number(item, None)
        return None if number is None else str(number)
    if isinstance(item, str):
        return " ".join(item.split()).lower()
    return None


def canonicalize(raw: Any, schema: AnswerSchema) -> Any:
    """The canonical value of ``raw``: a schema value, ``"no_info"`` or an :class:`Invalid`."""
    if _is_no_info(raw) or (isinstance(raw, list | tuple) and schema.type != "list" and not raw):
        if schema.allows_no_info:
            return NO_INFO
        return Invalid(_short(raw), "no_info is not allowed by the answer schema")
    canon: Any
    if schema.type == "boolean":
        canon = _canon_bool(raw)
        if canon is None and schema.enum:
            canon = _canon_enum(raw, schema.enum)
    elif schema.type == "enum":
        canon = _canon_enum(raw, schema.enum or ())
    elif schema.type == "number":
        canon = _canon_number(raw, schema.unit)
    elif schema.type == "date":
        canon = _canon_date(raw)
    elif schema.type == "list":
        canon = _canon_list(raw, schema.enum or ())
    else:
        canon = " ".join(raw.split()).lower() if isinstance(raw, str) else None
    if canon is None:
        return Invalid(_short(raw), f"not a valid {schema.type} answer")
    return canon


def format_signature(raw: Any) -> str:
    """The spelling of a raw answer: its JSON form, with list order ignored."""
    if isinstance(raw, list | tuple):
        parts = sorted(format_signature(item) for item in raw)
        return "[" + ",".join(parts) + "]"
    if isinstance(raw, float):
        return repr(raw)
    return orjson.dumps(raw, option=orjson.OPT_SORT_KEYS).decode()


def to_json_value(canon: Any) -> Any:
    """A canonical value as plain JSON (lists for sets, a dict for Invalid)."""
    if isinstance(canon, Invalid):
        return canon.to_json()
    if isinstance(canon, tuple):
        return list(canon)
    return canon


def json_form(canon: Any) -> Any:
    """A canonical value as the records carry it: :func:`to_json_value`, with tuples as lists
    at any depth (what pydantic's JSON mode writes)."""
    return _lists(to_json_value(canon))


def _lists(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_lists(v) for v in value]
    return value


def _short(raw: Any) -> str:
    text = raw if isinstance(raw, str) else orjson.dumps(raw, default=str).decode()
    return text[:200]

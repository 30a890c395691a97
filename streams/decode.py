"""The one way a consumed record becomes a contract model, or a typed dead-letter reason.

:func:`decode_record` is pure (bytes in, model or :class:`BadRecord` out) and is what every
edge that consumes a contract calls (agent answers, judge jobs, debrief requests,
adjudications, judge results and cell outcomes) and what ``judgeflow produce`` checks a line
with. In order:

* ``oversized``: the value is larger than the contract's bound (:func:`max_bytes`);
* ``invalid_json``: not JSON, or JSON that is not an object;
* ``schema_error``: valid JSON that breaks the contract: an object with a duplicate key
  (JSON parsers keep the last one silently: a request would be graded as its second
  ``case_id``), nesting deeper than a parser goes, or a model error (unknown or missing
  fields, unsafe ids, a time without a UTC offset ...).

Messages name the place and the reason, never a value nor a key the sender chose (PHI).
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ValidationError

from schemas.calibration import Adjudication
from schemas.chart_review import MAX_JSON_DEPTH, AgentAnswer
from schemas.errors import describe_record
from schemas.medkit import DebriefRequest
from streams import limits
from streams.errors import BadRecord
from streams.json_depth import depth_reason, nesting, too_deep

M = TypeVar("M", bound=BaseModel)

#: Largest value per contract (others: :data:`~streams.limits.MAX_INPUT_RECORD_BYTES`).
MAX_BYTES: dict[type[BaseModel], int] = {
    AgentAnswer: limits.MAX_ANSWER_BYTES,
    Adjudication: limits.MAX_ADJUDICATION_BYTES,
    DebriefRequest: limits.MAX_DEBRIEF_REQUEST_BYTES,
}


def max_bytes(model: type[BaseModel]) -> int:
    return MAX_BYTES.get(model, limits.MAX_INPUT_RECORD_BYTES)


class _Duplicate(Exception):
    pass


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Duplicate
    return out


def has_duplicate_key(raw: bytes) -> bool:
    """Whether any object in ``raw`` (already known to be valid JSON) repeats a key, after
    unescaping (``"a"`` and ``"\\u0061"`` are the same key)."""
    try:
        json.loads(raw, object_pairs_hook=_unique)
    except _Duplicate:
        return True
    except (ValueError, RecursionError):  # orjson already judged it; too deep: see caller
        return False
    return False


_JSON_SPACE = b" \t\n\r"


def _key_count(data: Any) -> int:
    """Keys of every object in ``data`` (a stack, not recursion: the hot path's cost)."""
    count, stack = 0, [data]
    while stack:
        item = stack.pop()
        children = item.values() if type(item) is dict else item
        if type(item) is dict:
            count += len(item)
        stack += [c for c in children if type(c) is dict or type(c) is list]
    return count


def repeats_a_key(raw: bytes, data: Any) -> bool:
    """:func:`has_duplicate_key`, run only when it could be true. ``data`` is ``raw`` parsed:
    a repeated key leaves it fewer keys than ``raw`` has, and ``raw`` has at most as many
    keys as ``":`` pairs once JSON spacing is dropped (every key ends so; text in a string
    only as ``\\":``, rare). As many (the usual record) proves none repeats, for a scan
    instead of a second parse (``judgeflow bench detect --core``)."""
    if raw.translate(None, _JSON_SPACE).count(b'":') == _key_count(data):
        return False
    return has_duplicate_key(raw)


def uses_nan(raw: bytes) -> bool:
    """Whether ``raw`` is JSON but for NaN/Infinity (JavaScript's spelling, which some
    senders write): a contract breach (``schema_error``), not unreadable bytes."""
    seen: list[str] = []

    def constant(name: str) -> float:
        seen.append(name)
        return 0.0

    try:
        json.loads(raw, parse_constant=constant)
    except (ValueError, RecursionError):
        return False
    return bool(seen)


def decode_record(model: type[M], value: bytes | None, limit: int | None = None) -> M:
    """``value`` validated as ``model``; :class:`BadRecord` with the dead-letter type."""
    name = model.__name__
    raw = value or b""
    bound = max_bytes(model) if limit is None else limit
    if len(raw) > bound:
        raise BadRecord("oversized", f"{name} of {len(raw)} bytes exceeds the limit of "
                        f"{bound} bytes")
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        depth = too_deep(raw)
        if depth is not None:
            raise BadRecord("schema_error", f"{name} invalid: {depth_reason(depth)}") from None
        if uses_nan(raw):
            raise BadRecord("schema_error", f"{name} invalid: NaN and Infinity are not JSON "
                            "numbers") from None
        raise BadRecord("invalid_json", f"not a JSON {name}: {exc.msg}") from None
    if not isinstance(data, dict):
        raise BadRecord("invalid_json", f"value is a JSON {type(data).__name__}, not an object")
    if repeats_a_key(raw, data):
        raise BadRecord("schema_error", f"{name} invalid: a JSON object has a duplicate key")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        deepest, _ = nesting(raw)  # our own bound: say so (the error types alone do not)
        reason = (depth_reason(deepest) if deepest > MAX_JSON_DEPTH
                  else f"{exc.error_count()} error(s): " + describe_record(exc))
        raise BadRecord("schema_error", f"{name} invalid: {reason}") from None

"""The JSON Schema the model must answer with, generated from :class:`JudgeAnalysis`.

Structured outputs accept a subset of JSON Schema, so the generated schema is tightened:
every object closed (``additionalProperties: false``) with all keys required, fixed-length
tuples turned into plain arrays, and keywords the API does not accept removed. The shape
stays the contract's; code re-validates every answer against the model anyway.
"""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

from schemas.chart_review import JudgeAnalysis

FIELDS = tuple(JudgeAnalysis.model_fields)
POINTER_FIELDS = ("note_id", "what_to_look_for", "offsets")
_DROP = {"title", "default", "maxItems", "minItems", "maxLength", "minLength", "description"}
#: ``suggested_answer`` is any JSON value in the model; the criterion decides which one.
_ANSWER = {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"},
                     {"type": "array", "items": {"type": "string"}}, {"type": "null"}]}


def _tighten(node: Any) -> Any:
    if isinstance(node, list):
        return [_tighten(n) for n in node]
    if not isinstance(node, dict):
        return node
    out = {k: _tighten(v) for k, v in node.items() if k not in _DROP}
    if "prefixItems" in out:  # tuple[int, int] -> array of that item type
        items = out.pop("prefixItems")
        out["items"] = items[0] if items else {}
    if out.get("type") == "object" and "properties" in out:
        out["additionalProperties"] = False
        out["required"] = list(out["properties"])
    return out


@cache
def shared_schema() -> dict[str, Any]:
    """The one cached instance (for requests, which never mutate it)."""
    schema = _tighten(JudgeAnalysis.model_json_schema(mode="validation"))
    schema["properties"]["suggested_answer"] = _ANSWER
    return dict(schema)


def judge_output_schema() -> dict[str, Any]:
    """A fresh copy (callers may not mutate the cached one)."""
    return copy.deepcopy(shared_schema())

"""Valid JSON nested too deep is a contract breach (``schema_error``), not ``invalid_json``.

Our parsers stop at a depth of their own (orjson at 1024 levels, pydantic's JSON parser at
about 200), below which a free JSON value is still bounded by ``MAX_JSON_DEPTH`` (32). A
record a parser refused *only* for its depth is valid JSON: the dead letter should say that
it is nested too deep, so that the sender fixes the right thing.
"""

from __future__ import annotations

import re

import orjson

from schemas.chart_review import MAX_JSON_DEPTH

#: A JSON string (skipped whole, so brackets inside strings do not count) or a bracket.
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_CLOSES = {b"[": b"]", b"{": b"}"}


def nesting(raw: bytes) -> tuple[int, bool]:
    """(deepest nesting of arrays and objects, whether every bracket is closed in order)."""
    stack: list[bytes] = []
    deepest = 0
    for match in _TOKEN.finditer(raw):
        token = match.group()
        if token in _CLOSES:
            stack.append(token)
            deepest = max(deepest, len(stack))
        elif token[:1] != b'"' and (not stack or _CLOSES[stack.pop()] != token):
            return deepest, False
    return deepest, not stack


def too_deep(raw: bytes | None) -> int | None:
    """The nesting depth of ``raw`` when it is JSON that was refused only for being nested
    deeper than :data:`MAX_JSON_DEPTH`; ``None`` when it is not JSON or not that deep."""
    if not raw:
        return None
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if "depth" not in exc.msg:  # orjson parses left to right: up to here it was valid
            return None
    depth, balanced = nesting(raw)
    return depth if balanced and depth > MAX_JSON_DEPTH else None


def depth_reason(depth: int) -> str:
    return f"JSON nested {depth} levels deep (the limit is {MAX_JSON_DEPTH})"

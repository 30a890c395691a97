"""Turn a model response into the raw JSON object it contains. Pure functions.

Accepted, in order: a tool call carrying the object; text with the object between
``<JUDGE_ANALYSIS>`` sentinels (code fences inside are tolerated); text that is a bare JSON
object (what structured output returns; in sentinel mode this is accepted but flagged
``missing_sentinel``). Anything else is ``missing_sentinel`` / ``invalid_json`` with no object,
which the orchestrator answers with a repair round-trip and then a fallback.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from agents.judge.prompt import SENTINEL_CLOSE, SENTINEL_OPEN
from agents.providers.base import LLMResponse
from schemas.chart_review import ValidationProblem

_BLOCK = re.compile(re.escape(SENTINEL_OPEN) + r"(.*?)" + re.escape(SENTINEL_CLOSE), re.S)
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


@dataclass(frozen=True)
class Parsed:
    payload: dict[str, Any] | None
    problems: tuple[ValidationProblem, ...] = ()


def _problem(kind: str, message: str, action: str = "fallback") -> ValidationProblem:
    return ValidationProblem(type=kind, message=message, action=action)  # type: ignore[arg-type]


def _load_object(text: str) -> dict[str, Any] | str:
    body = _FENCE.sub("", text.strip())
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        return f"not valid JSON ({exc.msg} at position {exc.pos})"
    if not isinstance(value, dict):
        return f"a JSON {type(value).__name__}, not an object"
    return value


def parse_response(response: LLMResponse, *, structured: bool) -> Parsed:
    for call in response.tool_calls:
        if isinstance(call.input, dict):
            return Parsed(dict(call.input))
    text = response.text.strip()
    blocks = _BLOCK.findall(text)
    if blocks:
        loaded = _load_object(blocks[-1])
        if isinstance(loaded, str):
            return Parsed(None, (_problem("invalid_json", f"the sentinel block is {loaded}"),))
        problems: tuple[ValidationProblem, ...] = ()
        outside = _BLOCK.sub("", text).strip()
        if outside:
            problems = (_problem("text_outside_sentinels",
                                 f"{len(outside)} characters outside the sentinels ignored",
                                 "flagged"),)
        return Parsed(loaded, problems)
    loaded = _load_object(text) if text else "empty"
    if isinstance(loaded, dict):
        if structured:
            return Parsed(loaded)
        return Parsed(loaded, (_problem("missing_sentinel", "a bare JSON object without the "
                                        "sentinels was accepted", "repaired"),))
    if structured:
        return Parsed(None, (_problem("invalid_json", f"the answer is {loaded}"),))
    return Parsed(None, (_problem("missing_sentinel", f"no {SENTINEL_OPEN} block in the "
                                  f"answer, and the answer is {loaded}"),))

"""Turn a model response into the raw JSON object it contains. Pure functions.

Accepted, in order: exactly one tool call carrying the object (with no sentinel tag in the
text: that is ``multiple_answers``); in structured mode, text
that is one bare JSON object (what structured output returns: sentinel-like text inside its
strings is data); text with exactly one ``<JUDGE_ANALYSIS>`` ... ``</JUDGE_ANALYSIS>`` block
(code fences inside are tolerated); text that is a bare JSON object (in sentinel mode
accepted but flagged ``missing_sentinel``). Anything else is ``missing_sentinel`` /
``invalid_json`` with no object, which the orchestrator answers with a repair round-trip
and then a fallback.

Exactly one analysis: notes are untrusted, and a note (or a quoted passage the model
copies) may carry a forged block. So any tag that is not the one opening tag followed by
the one closing tag — a second block before or after ours, with or without text between,
a nested or unterminated block, a stray closing tag, a near-miss spelling — is
``sentinel_blocks`` with no object (never "the last block wins"); a JSON object repeating a
key (the one who writes last would win) is ``duplicate_key``. All get the repair
round-trip, and ``sentinel_blocks`` and ``multiple_answers`` keep the result ``flagged``
even when the repair is clean (:data:`agents.judge.validate.UNTRUSTED`): the reviewer must
see it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from agents.judge.prompt import SENTINEL_CLOSE, SENTINEL_OPEN
from agents.providers.base import LLMResponse
from schemas.chart_review import ValidationProblem

#: anything tag-like naming the sentinel (any case, spaces, a closing slash)
_TAG = re.compile(r"<\s*/?\s*JUDGE_ANALYSIS\s*>", re.I)
_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


@dataclass(frozen=True)
class Parsed:
    payload: dict[str, Any] | None
    problems: tuple[ValidationProblem, ...] = ()


def _problem(kind: str, message: str, action: str = "fallback") -> ValidationProblem:
    return ValidationProblem(type=kind, message=message, action=action)  # type: ignore[arg-type]


class _DuplicateKey(ValueError):
    pass


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _DuplicateKey(next(k for k in keys if keys.count(k) > 1))
    return dict(pairs)


def _load_object(text: str) -> dict[str, Any] | ValidationProblem:
    body = _FENCE.sub("", text.strip())
    try:
        value = json.loads(body, object_pairs_hook=_unique)
    except _DuplicateKey as exc:
        return _problem("duplicate_key", f"the object repeats the key {str(exc)[:40]!r}; "
                        "exactly one value per key is accepted")
    except json.JSONDecodeError as exc:
        return _problem("invalid_json", f"not valid JSON ({exc.msg} at position {exc.pos})")
    if not isinstance(value, dict):
        return _problem("invalid_json", f"a JSON {type(value).__name__}, not an object")
    return value


def _sentinel_problem(tags: list[str]) -> ValidationProblem | None:
    """None when ``tags`` are exactly our opening tag then our closing tag."""
    if tags == [SENTINEL_OPEN, SENTINEL_CLOSE]:
        return None
    opens = sum(1 for t in tags if "/" not in t)
    return _problem("sentinel_blocks", f"the answer holds {opens} opening and "
                    f"{len(tags) - opens} closing {SENTINEL_OPEN} tag(s) (or a misspelt or "
                    "nested one); exactly one block is accepted, with nothing like it "
                    "before, inside or after it")


def _block(text: str, tags: list[re.Match[str]]) -> Parsed:
    wrong = _sentinel_problem([m.group(0) for m in tags])
    if wrong is not None:
        return Parsed(None, (wrong,))
    start, end = tags[0], tags[1]
    loaded = _load_object(text[start.end():end.start()])
    if isinstance(loaded, ValidationProblem):
        return Parsed(None, (loaded.model_copy(
            update={"message": f"the sentinel block: {loaded.message}"}),))
    outside = (text[:start.start()] + text[end.end():]).strip()
    if not outside:
        return Parsed(loaded)
    return Parsed(loaded, (_problem("text_outside_sentinels", f"{len(outside)} characters "
                                    "outside the sentinels ignored", "flagged"),))


def parse_response(response: LLMResponse, *, structured: bool) -> Parsed:
    if len(response.tool_calls) > 1:
        return Parsed(None, (_problem("multiple_answers", f"{len(response.tool_calls)} tool "
                                      "calls; exactly one answer is accepted"),))
    if response.tool_calls and _TAG.search(response.text):
        # the text may carry a forged block (copied from a note): two answers, neither
        # taken (taking the call would hide that the reply held a second analysis)
        return Parsed(None, (_problem("multiple_answers", "a tool call and a "
                                      f"{SENTINEL_OPEN} tag in the text; exactly one answer "
                                      "is accepted"),))
    for call in response.tool_calls:
        if isinstance(call.input, dict):
            return Parsed(dict(call.input))
    text = response.text.strip()
    loaded = _load_object(text) if text else _problem("invalid_json", "empty")
    if structured and isinstance(loaded, dict):
        return Parsed(loaded)
    tags = list(_TAG.finditer(text))
    if tags:
        return _block(text, tags)
    if isinstance(loaded, dict):
        return Parsed(loaded, (_problem("missing_sentinel", "a bare JSON object without the "
                                        "sentinels was accepted", "repaired"),))
    if structured or loaded.type == "duplicate_key":
        return Parsed(None, (loaded.model_copy(
            update={"message": f"the answer is {loaded.message}"}),))
    return Parsed(None, (_problem("missing_sentinel", f"no {SENTINEL_OPEN} block in the "
                                  f"answer, and the answer is {loaded.message}"),))

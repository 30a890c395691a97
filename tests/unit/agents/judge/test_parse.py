"""Extracting the JSON object from a model response (pure)."""

from __future__ import annotations

import pytest

from agents.judge.parse import parse_response
from agents.providers.base import LLMResponse, TokenUsage, ToolCall


def resp(text: str = "", calls: tuple[ToolCall, ...] = ()) -> LLMResponse:
    return LLMResponse(text, calls, "end_turn", TokenUsage(), "m", 1)


@pytest.mark.parametrize("text", [
    '<JUDGE_ANALYSIS>\n{"a": 1}\n</JUDGE_ANALYSIS>',
    '<JUDGE_ANALYSIS>```json\n{"a": 1}\n```</JUDGE_ANALYSIS>',
])
def test_sentinel_blocks_are_read(text: str) -> None:
    parsed = parse_response(resp(text), structured=False)
    assert parsed.payload == {"a": 1} and parsed.problems == ()


def test_text_around_the_sentinels_is_ignored_but_flagged() -> None:
    parsed = parse_response(resp('Sure!\n<JUDGE_ANALYSIS>{"a": 1}</JUDGE_ANALYSIS>'),
                            structured=False)
    assert parsed.payload == {"a": 1}
    assert [p.type for p in parsed.problems] == ["text_outside_sentinels"]


def test_structured_output_is_bare_json() -> None:
    assert parse_response(resp('{"a": 1}'), structured=True).payload == {"a": 1}


def test_bare_json_without_sentinels_is_accepted_and_flagged() -> None:
    parsed = parse_response(resp('{"a": 1}'), structured=False)
    assert parsed.payload == {"a": 1}
    assert [(p.type, p.action) for p in parsed.problems] == [("missing_sentinel", "repaired")]


@pytest.mark.parametrize(("text", "structured", "kind"), [
    ("The answer is true.", False, "missing_sentinel"),
    ("", False, "missing_sentinel"),
    ("<JUDGE_ANALYSIS>{not json}</JUDGE_ANALYSIS>", False, "invalid_json"),
    ("<JUDGE_ANALYSIS>[1, 2]</JUDGE_ANALYSIS>", False, "invalid_json"),
    ('{"a": 1', True, "invalid_json"),
])
def test_unusable_text_yields_no_payload(text: str, structured: bool, kind: str) -> None:
    parsed = parse_response(resp(text), structured=structured)
    assert parsed.payload is None
    assert [(p.type, p.action) for p in parsed.problems] == [(kind, "fallback")]


def test_a_tool_call_carries_the_object() -> None:
    parsed = parse_response(resp(calls=(ToolCall("t1", "judge", {"a": 2}),)), structured=True)
    assert parsed.payload == {"a": 2}

"""Grader orchestration against a scripted Provider: tool use, repair round-trip, legacy
tool rejection, dead-lettering, usage accounting."""

from __future__ import annotations

import pytest

from agents.debrief.grader import DebriefGrader, evaluation_id
from agents.debrief.prompt import LABEL, SYSTEM
from agents.debrief.versioning import debrief_version
from agents.errors import LLMError
from agents.settings import Settings
from schemas.medkit import TOOL_NAME
from streams.errors import BadRecord
from tests.unit.agents.debrief.support import (
    ScriptedProvider,
    good_payload,
    sample,
    text_reply,
    tool_reply,
)

REQ = sample("req-sep-001")


async def _grade(*replies):  # type: ignore[no-untyped-def]
    provider = ScriptedProvider(*replies)
    return await DebriefGrader(Settings(), provider).evaluate(REQ), provider


async def test_a_good_tool_call_becomes_an_evaluation_with_envelope() -> None:
    ev, provider = await _grade(tool_reply(good_payload(REQ)))
    assert ev.case_id == REQ.case_id and ev.request_id == REQ.request_id
    assert ev.provider == "anthropic" and ev.model == "claude-test"
    version = debrief_version(Settings(), "anthropic", "claude-test")
    assert ev.prompt_version == version and version.startswith(LABEL + "+")
    assert ev.evaluation_id == evaluation_id(REQ.request_id, version)
    assert ev.usage.input_tokens == 1000 and ev.usage.cache_read_input_tokens == 800
    assert ev.usage.cost_usd > 0 and ev.usage.llm_calls == 1
    sent = provider.requests[0]
    assert sent.tool_choice == "auto" and sent.tools[0]["name"] == TOOL_NAME
    assert sent.tools[0]["strict"] is True
    assert sent.system[0].cache and sent.system[0].text == SYSTEM
    assert sent.messages[0]["content"].startswith("[debrief request]\n")


async def test_no_tool_call_is_repaired_by_one_round_trip() -> None:
    ev, provider = await _grade(text_reply(), tool_reply(good_payload(REQ)))
    assert len(provider.requests) == 2
    repair = provider.requests[1].messages
    assert [m["role"] for m in repair] == ["user", "assistant", "user"]
    assert "no render_case_evaluation tool call" in repair[2]["content"][-1]["text"]
    assert ev.usage.llm_calls == 2 and ev.usage.input_tokens == 2000
    assert "repair_round_trip" in {p.type for p in ev.validation}


async def test_no_tool_call_twice_is_dead_lettered_not_published() -> None:
    with pytest.raises(BadRecord) as err:
        await _grade(text_reply(), text_reply())
    assert err.value.error_type == "invalid_output"
    assert "after one repair round-trip" in err.value.message


async def test_legacy_render_case_grade_is_rejected_and_answered_with_a_tool_result() -> None:
    legacy = tool_reply({"case_id": REQ.case_id, "score": 82}, name="render_case_grade")
    ev, provider = await _grade(legacy, tool_reply(good_payload(REQ)))
    last = provider.requests[1].messages[-1]["content"]
    assert last[0]["type"] == "tool_result" and last[0]["is_error"] is True
    assert last[0]["tool_use_id"] == "toolu_1"
    assert ev.global_rating.verdict == "excellent"
    assert "render_case_grade" in next(p.message for p in ev.validation
                                       if p.type == "repair_round_trip")


async def test_legacy_tool_twice_is_never_published() -> None:
    legacy = tool_reply({"score": 82}, name="render_case_grade")
    with pytest.raises(BadRecord, match="render_case_grade"):
        await _grade(legacy, legacy)


async def test_schema_invalid_tool_input_is_repaired_with_field_paths_only() -> None:
    bad = good_payload(REQ) | {"global_rating": {"score": 1.7, "verdict": "superb"}}
    ev, provider = await _grade(tool_reply(bad), tool_reply(good_payload(REQ)))
    note = provider.requests[1].messages[-1]["content"][-1]["text"]
    assert "global_rating.score" in note and "1.7" not in note
    assert ev.global_rating.score == 1.0


async def test_two_tool_calls_count_as_one_unusable_reply() -> None:
    twice = tool_reply(good_payload(REQ))
    twice = type(twice)("", twice.tool_calls * 2, "tool_use", twice.usage, twice.model, 5)
    with pytest.raises(BadRecord, match="exactly one"):
        await _grade(twice, twice)


@pytest.mark.parametrize(("error", "retryable"), [
    (LLMError("rate_limited", "HTTP 429", retryable=True, status=429), True),
    (LLMError("overloaded", "HTTP 529", retryable=True, status=529), True),
    (LLMError("auth", "HTTP 401", retryable=False, status=401), False),
])
async def test_llm_failures_after_provider_retries_are_dead_lettered(
        error: LLMError, retryable: bool) -> None:
    with pytest.raises(BadRecord) as err:
        await _grade(error)
    assert err.value.error_type == "llm_failure"
    assert err.value.message.startswith(error.kind)


async def test_a_refusal_is_not_repaired() -> None:
    refusal = text_reply("I can't help with that.")
    refusal = type(refusal)(refusal.text, (), "refusal", refusal.usage, refusal.model, 5)
    with pytest.raises(BadRecord, match="refused"):
        await _grade(refusal)


async def test_auto_rubric_is_sent_and_reported_for_a_case_without_rubric() -> None:
    req = sample("req-ank-001")
    provider = ScriptedProvider(tool_reply(good_payload(req)))
    ev = await DebriefGrader(Settings(), provider).evaluate(req)
    assert ev.rubric_source == "auto"
    assert '"rubric_source":"auto"' in provider.requests[0].messages[0]["content"]

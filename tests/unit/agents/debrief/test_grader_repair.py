"""The debrief repair turn against today's API: the assistant turn goes back exactly as
received (thinking blocks and signatures included); a reply cut at max_tokens is asked
again with the larger budget; a context-window stop is a permanent failure."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agents.debrief.grader import DebriefGrader
from agents.settings import Settings
from streams.errors import BadRecord
from tests.unit.agents.debrief.support import (
    ScriptedProvider,
    good_payload,
    sample,
    text_reply,
    tool_reply,
)

REQ = sample("req-sep-001")
THINKING = {"type": "thinking", "thinking": "Let me weigh the rubric.", "signature": "c2ln"}
REDACTED = {"type": "redacted_thinking", "data": "ZW5j"}


async def grade(*replies):  # type: ignore[no-untyped-def]
    provider = ScriptedProvider(*replies)
    settings = Settings(llm={"repair_max_tokens": 40_000})
    return await DebriefGrader(settings, provider).evaluate(REQ), provider


async def test_the_repair_turn_passes_the_thinking_blocks_back_unmodified() -> None:
    bad = tool_reply({"case_id": REQ.case_id}, name="render_case_grade")
    content = (THINKING, REDACTED, {"type": "tool_use", "id": "toolu_1",
                                    "name": "render_case_grade",
                                    "input": {"case_id": REQ.case_id}})
    bad = replace(bad, content=content)
    _, provider = await grade(bad, tool_reply(good_payload(REQ)))
    turn = provider.requests[1].messages[1]
    assert turn == {"role": "assistant", "content": list(content)}
    result = provider.requests[1].messages[2]["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_1"


async def test_a_reply_cut_at_max_tokens_is_asked_again_with_a_larger_budget() -> None:
    cut = replace(text_reply("The evaluation begins"), stop_reason="max_tokens",
                  content=(THINKING,))
    ev, provider = await grade(cut, tool_reply(good_payload(REQ)))
    first, second = provider.requests
    assert second.messages == first.messages  # the same question, not a continuation
    assert second.max_tokens == 40_000 > first.max_tokens
    assert ev.usage.llm_calls == 2


async def test_a_context_window_stop_is_a_permanent_failure() -> None:
    stop = replace(text_reply(""), stop_reason="model_context_window_exceeded")
    with pytest.raises(BadRecord) as err:
        await grade(stop)
    assert err.value.error_type == "llm_failure" and "context window" in err.value.message

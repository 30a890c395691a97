"""The LLM journal's codec: an answer round-trips exactly; a request's signature ignores its
text (a fresh data-boundary token per send) but not its shape."""

from __future__ import annotations

import dataclasses

import pytest

from agents.providers.base import LLMRequest, LLMResponse, SystemBlock, TokenUsage, ToolCall
from agents.providers.journal import decode_response, encode_response, signature

RESP = LLMResponse(text="t", tool_calls=(ToolCall("id1", "tool", {"a": [1]}),),
                   stop_reason="tool_use", usage=TokenUsage(10, 20, 3, 4), model="m",
                   latency_ms=5, attempts=2,
                   content=({"type": "thinking", "thinking": "x", "signature": "s"},),
                   batch=False)
REQ = LLMRequest(system=(SystemBlock("sys", cache=True),),
                 messages=({"role": "user", "content": "token abc123"},), max_tokens=100)


def test_an_answer_round_trips() -> None:
    assert decode_response(encode_response(RESP)) == RESP


@pytest.mark.parametrize(("change", "same"), [
    ({"messages": ({"role": "user", "content": "token zz9"},)}, True),
    ({"max_tokens": 200}, False),
    ({"messages": ({"role": "user", "content": "a"}, {"role": "assistant", "content": []},
                   {"role": "user", "content": "b"})}, False),
    ({"tools": ({"name": "render"},)}, False),
])
def test_the_signature_is_the_shape_not_the_text(change: dict[str, object], same: bool) -> None:
    assert (signature(dataclasses.replace(REQ, **change)) == signature(REQ)) is same  # type: ignore[arg-type]

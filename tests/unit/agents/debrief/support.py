"""Shared test support for the debrief grader: sample requests, model-like payloads, a tiny
in-test Provider, and a FakeAnthropic responder that answers like a good attending."""

from __future__ import annotations

import json
import re
from collections import deque
from typing import Any

import orjson

from agents.debrief import offline
from agents.debrief.autorubric import rubric_for
from agents.debrief.prompt import HEADER
from agents.debrief.sampledata import load_requests
from agents.errors import LLMError
from agents.providers.base import LLMRequest, LLMResponse, TokenUsage, ToolCall
from schemas.medkit import TOOL_NAME, DebriefRequest
from tools.fakes.fake_reply import Reply

REQUESTS = {r.request_id: r for r in load_requests()}
#: The framed data block of a user message (agents/framing.py): boundary, label, payload.
_FRAMED = re.compile(r"^<<DATA-([0-9a-f]+) [^\n]*>>\n(.*?)\n<<END-\1>>$", re.S | re.M)


def parse_user_message(text: str) -> dict[str, Any]:
    """The JSON object of a debrief user message, as a fake model reads it."""
    m = _FRAMED.search(text)
    payload = m.group(2) if m else text.partition("\n")[2]
    data: dict[str, Any] = orjson.loads(payload)
    return data


def sample(request_id: str) -> DebriefRequest:
    return REQUESTS[request_id]


def good_payload(request: DebriefRequest) -> dict[str, Any]:
    """What a well-behaved attending would return (the checklist grade, as JSON)."""
    rubric, _ = rubric_for(request)
    return offline.grade(request, rubric).model_dump(mode="json")


def tool_reply(payload: Any, name: str = TOOL_NAME, text: str = "") -> LLMResponse:
    return LLMResponse(text, (ToolCall("toolu_1", name, payload),), "tool_use",
                       TokenUsage(1000, 300, 800, 0), "claude-test", 5)


def text_reply(text: str = "Here is my evaluation in prose.") -> LLMResponse:
    return LLMResponse(text, (), "end_turn", TokenUsage(1000, 50), "claude-test", 5)


class ScriptedProvider:
    """A Provider whose replies are scripted; records every request it was sent."""

    name = "anthropic"
    model = "claude-test"

    def __init__(self, *replies: LLMResponse | LLMError) -> None:
        self.replies = deque(replies)
        self.requests: list[LLMRequest] = []

    async def complete(self, request: LLMRequest) -> LLMResponse:
        self.requests.append(request)
        reply = self.replies.popleft()
        if isinstance(reply, LLMError):
            raise reply
        return reply


def request_in(body: dict[str, Any]) -> DebriefRequest:
    """The DebriefRequest inside a Messages API body sent by the grader."""
    first = body["messages"][0]["content"]
    text = first if isinstance(first, str) else first[0]["text"]
    data = parse_user_message(text)
    data.pop("rubric_source")
    if data.get("rubric", {}).get("data_gathering", [{}])[0].get("id", "").startswith("auto-"):
        data["rubric"] = None
    return DebriefRequest.model_validate(data)


def is_debrief(body: dict[str, Any]) -> bool:
    first = (body.get("messages") or [{}])[0].get("content")
    text = first if isinstance(first, str) else (first or [{}])[0].get("text", "")
    return str(text).startswith(HEADER)


def attending(body: dict[str, Any]) -> Reply:
    """FakeAnthropic responder: a good evaluation for the request in ``body``, as the
    render_case_evaluation tool call, or as the JSON text when the request asked for
    structured outputs (``output_config.format``)."""
    payload = good_payload(request_in(body))
    if (body.get("output_config") or {}).get("format"):
        return Reply.message(text=json.dumps(payload), input_tokens=2400, output_tokens=700)
    return Reply.message(tool_use={"name": TOOL_NAME, "input": payload},
                         input_tokens=2400, output_tokens=700)

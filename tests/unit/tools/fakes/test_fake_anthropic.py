"""The fake Anthropic API rejects what the real API rejects, so a regression in our request
building fails a test instead of production. Raw HTTP: no SDK in between."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from agents.providers.anthropic_params import build_params
from agents.providers.base import LLMRequest, SystemBlock
from agents.providers.catalogue import load
from tools.fakes.fake_anthropic import FakeAnthropic, Reply
from tools.fakes.fake_rules import sign

USER = {"role": "user", "content": "hello"}
OBJ = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"],
       "additionalProperties": False}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as f:
        yield f


def call(fake: FakeAnthropic, body: dict[str, Any], path: str = "/v1/messages",
         method: str = "POST") -> tuple[int, dict[str, Any], dict[str, str]]:
    data = json.dumps(body).encode() if method == "POST" else None
    req = urllib.request.Request(fake.base_url + path, data=data, method=method,
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, json.loads(r.read()), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read()), dict(e.headers)


def msg(**kw: Any) -> dict[str, Any]:
    return {"model": "claude-sonnet-5-5", "max_tokens": 100, "messages": [USER], **kw}


def schema_with(**extra: Any) -> dict[str, Any]:
    return {**OBJ, "properties": {"a": {"type": "string", **extra}}}


def tool(schema: dict[str, Any], strict: bool = True) -> dict[str, Any]:
    return {"name": "t", "input_schema": schema, "strict": strict}


def fmt(schema: dict[str, Any]) -> dict[str, Any]:
    return {"format": {"type": "json_schema", "schema": schema}}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t, "cache_control": {"type": "ephemeral"}}


REJECTED: list[tuple[str, dict[str, Any], int, str]] = [
    ("unknown model", msg(model="claude-nope-1"), 404, "not_found_error"),
    ("retired model", msg(model="claude-sonnet-4-5"), 404, "not_found_error"),
    ("forced tool_choice any", msg(tools=[tool(OBJ)], tool_choice={"type": "any"}), 400,
     "forced tool use"),
    ("forced tool_choice tool", msg(tools=[tool(OBJ)], tool_choice={"type": "tool",
                                                                    "name": "t"}), 400,
     "forced tool use"),
    ("temperature", msg(temperature=0.2), 400, "sampling"),
    ("top_p", msg(top_p=0.9), 400, "sampling"),
    ("top_k", msg(top_k=5), 400, "sampling"),
    ("minLength", msg(output_config=fmt(schema_with(minLength=1))), 400, "minLength"),
    ("maxLength", msg(output_config=fmt(schema_with(maxLength=9))), 400, "maxLength"),
    ("minimum", msg(output_config=fmt({**OBJ, "properties": {"a": {"type": "number",
                                                                  "minimum": 0}}})), 400,
     "minimum"),
    ("minItems > 1", msg(output_config=fmt({**OBJ, "properties": {"a": {
        "type": "array", "items": {"type": "string"}, "minItems": 2}}})), 400, "minItems"),
    ("maxItems", msg(output_config=fmt({**OBJ, "properties": {"a": {
        "type": "array", "items": {"type": "string"}, "maxItems": 3}}})), 400, "maxItems"),
    ("pattern backreference", msg(output_config=fmt(schema_with(pattern=r"(a)\1"))), 400,
     "regex"),
    ("pattern lookahead", msg(output_config=fmt(schema_with(pattern=r"(?=a)a"))), 400,
     "regex"),
    ("additionalProperties true", msg(output_config=fmt({**OBJ,
                                                         "additionalProperties": True})),
     400, "additionalProperties"),
    ("strict tool keyword", msg(tools=[tool(schema_with(maxLength=3))]), 400, "maxLength"),
    ("manual thinking budget", msg(thinking={"type": "enabled", "budget_tokens": 2000}), 400,
     "manual budget"),
    ("effort the model lacks", msg(output_config={"effort": "max"}), 400, "effort"),
    ("effort on a model without one", msg(model="claude-haiku-4-5",
                                          output_config={"effort": "low"}), 400, "effort"),
    ("five breakpoints", msg(system=[text(str(i)) for i in range(5)]), 400,
     "maximum of 4"),
]


@pytest.mark.parametrize(("body", "status", "needle"), [r[1:] for r in REJECTED],
                         ids=[r[0] for r in REJECTED])
def test_rejected_like_the_real_api(fake: FakeAnthropic, body: dict[str, Any], status: int,
                                    needle: str) -> None:
    before = len(fake.queue)
    got, answer, _ = call(fake, body)
    assert got == status and answer["type"] == "error"
    assert needle in answer["error"]["type"] + answer["error"]["message"]
    assert len(fake.queue) == before  # a rejected request never consumes a scripted reply


ACCEPTED = [
    ("auto tool choice", msg(tools=[tool(OBJ)], tool_choice={"type": "auto"})),
    ("default temperature", msg(temperature=1)),
    ("adaptive thinking, an accepted effort", msg(thinking={"type": "adaptive"},
                                                  output_config={"effort": "xhigh"})),
    ("minItems 1, enum, formats", msg(output_config=fmt({**OBJ, "properties": {"a": {
        "type": "array", "items": {"type": "string", "format": "date", "enum": ["x"]},
        "minItems": 1}}}))),
    ("a property named like a keyword", msg(output_config=fmt({
        **OBJ, "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]}))),
    ("sampling on a model that allows it", msg(model="claude-haiku-4-5", temperature=0.0)),
    ("forced choice on a model that allows it", msg(model="claude-haiku-4-5",
                                                    tools=[tool(OBJ)],
                                                    tool_choice={"type": "any"})),
    ("four breakpoints", msg(system=[text(str(i)) for i in range(4)])),
    ("non-strict tool with keywords", msg(tools=[tool(schema_with(maxLength=3), False)])),
]


@pytest.mark.parametrize("body", [a[1] for a in ACCEPTED], ids=[a[0] for a in ACCEPTED])
def test_accepted_like_the_real_api(fake: FakeAnthropic, body: dict[str, Any]) -> None:
    got, answer, _ = call(fake, body)
    assert got == 200, answer


def test_our_params_for_every_current_model_are_accepted(fake: FakeAnthropic) -> None:
    request = LLMRequest(system=(SystemBlock("s", cache=True),), messages=(USER,),
                         tools=(tool(OBJ),), tool_choice="auto", sampling={"temperature": 0.0},
                         output_schema=OBJ)
    for model in ("claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-4-5"):
        body = build_params(request, model, load().get(model), max_tokens_floor=16_000,
                            effort="medium")
        got, answer, _ = call(fake, body)
        assert got == 200, (model, answer)


def continued(fake: FakeAnthropic, first: dict[str, Any],
              turn: list[dict[str, Any]]) -> tuple[int, dict[str, Any]]:
    use = next(b for b in first["content"] if b["type"] == "tool_use")
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use["id"],
                                           "content": "rejected"}]}
    got, answer, _ = call(fake, msg(tools=[tool(OBJ)], messages=[
        USER, {"role": "assistant", "content": turn}, result]))
    return got, answer


def test_a_continued_turn_needs_its_thinking_blocks_unmodified(fake: FakeAnthropic) -> None:
    fake.enqueue(Reply.message(tool_use={"name": "t", "input": {"a": "x"}}))
    _, first, _ = call(fake, msg(tools=[tool(OBJ)]))
    blocks = first["content"]
    assert [b["type"] for b in blocks] == ["thinking", "tool_use"]
    assert blocks[0]["signature"] == sign(blocks[0]["thinking"])
    without = [b for b in blocks if b["type"] != "thinking"]
    got, answer = continued(fake, first, without)
    assert got == 400 and "thinking blocks" in answer["error"]["message"]
    edited = [{**blocks[0], "thinking": blocks[0]["thinking"] + " (edited)"}, blocks[1]]
    got, answer = continued(fake, first, edited)
    assert got == 400 and "signature" in answer["error"]["message"]
    got, _ = continued(fake, first, blocks)
    assert got == 200


def test_haiku_replies_without_thinking(fake: FakeAnthropic) -> None:
    _, answer, _ = call(fake, msg(model="claude-haiku-4-5"))
    assert [b["type"] for b in answer["content"]] == ["text"]
    assert answer["model"] == "claude-haiku-4-5"


def test_prompt_caching_follows_the_model_minimum(fake: FakeAnthropic) -> None:
    big = "clinical rules " * 700  # ~10.5k chars -> ~3000 tokens: >= 2048, < 4096
    for model, first_write, later_read in (("claude-sonnet-5-5", True, True),
                                           ("claude-haiku-4-5", False, False)):
        body = msg(model=model, system=[text(big)])
        _, one, _ = call(fake, body)
        _, two, _ = call(fake, {**body, "messages": [{"role": "user", "content": "other"}]})
        assert (one["usage"]["cache_creation_input_tokens"] > 0) is first_write, model
        assert (two["usage"]["cache_read_input_tokens"] > 0) is later_read, model
        assert two["usage"]["cache_creation_input_tokens"] == 0


def test_count_tokens_models_and_headers(fake: FakeAnthropic) -> None:
    got, counted, headers = call(fake, msg(system=[text("x" * 350)]),
                                 "/v1/messages/count_tokens")
    assert got == 200 and counted["input_tokens"] > 100
    assert headers["request-id"].startswith("req_")
    for name in ("requests", "input-tokens", "output-tokens"):
        assert int(headers[f"anthropic-ratelimit-{name}-limit"]) > 0
        assert f"anthropic-ratelimit-{name}-remaining" in headers
        assert f"anthropic-ratelimit-{name}-reset" in headers
    got, info, _ = call(fake, {}, "/v1/models/claude-sonnet-5-5", "GET")
    assert got == 200 and info["id"] == "claude-sonnet-5-5" and info["lifecycle"] == "active"
    got, info, _ = call(fake, {}, "/v1/models/claude-sonnet-4-5", "GET")
    assert got == 404 and info["error"]["type"] == "not_found_error"


@pytest.mark.parametrize("status", [429, 529])
def test_overload_and_rate_limit_carry_retry_after(fake: FakeAnthropic, status: int) -> None:
    fake.enqueue(Reply.error(status))
    got, answer, headers = call(fake, msg())
    assert got == status and headers["retry-after"] == "1"
    assert answer["error"]["type"] in ("rate_limit_error", "overloaded_error")

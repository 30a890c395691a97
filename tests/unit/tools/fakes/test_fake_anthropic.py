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
from agents.providers.model_facts import parse
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
         method: str = "POST", version: str | None = "2026-10-21",
         ) -> tuple[int, dict[str, Any], dict[str, str]]:
    data = json.dumps(body).encode() if method == "POST" else None
    headers = {"content-type": "application/json"}
    if version is not None:
        headers["anthropic-version"] = version
    req = urllib.request.Request(fake.base_url + path, data=data, method=method,
                                 headers=headers)
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
    ("temperature", msg(temperature=0.2), 400, "temperature: Extra inputs"),
    ("temperature at its default", msg(temperature=1), 400, "temperature: Extra inputs"),
    ("top_p", msg(top_p=0.9), 400, "top_p: Extra inputs"),
    ("top_k", msg(top_k=5), 400, "top_k: Extra inputs"),
    ("sampling on a model that allowed it", msg(model="claude-haiku-4-5", temperature=0.0),
     400, "Extra inputs"),
    ("document block in an assistant message", msg(messages=[USER, {
        "role": "assistant", "content": [{"type": "document", "source": {
            "type": "text", "media_type": "text/plain", "data": "x"}}]}, USER]), 400,
     "document blocks are not permitted"),
    ("citations on a user text block", msg(messages=[{"role": "user", "content": [{
        "type": "text", "text": "x", "citations": [{"type": "char_location",
                                                  "cited_text": "x"}]}]}]), 400,
     "citations are not permitted"),
    ("max_tokens over the model maximum", msg(max_tokens=200_000), 400, "max_tokens"),
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
    ("retired model (Models API still lists it)", msg(model="claude-sonnet-4-5"), 404,
     "not_found_error"),
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
    ("citations on an assistant text block", msg(messages=[USER, {"role": "assistant",
        "content": [{"type": "text", "text": "x", "citations": [{"type": "char_location",
                                                                 "cited_text": "x"}]}]},
        USER])),
    ("empty citations on a user text block", msg(messages=[{"role": "user", "content": [{
        "type": "text", "text": "x", "citations": []}]}])),
    ("adaptive thinking, an accepted effort", msg(thinking={"type": "adaptive"},
                                                  output_config={"effort": "xhigh"})),
    ("minItems 1, enum, formats", msg(output_config=fmt({**OBJ, "properties": {"a": {
        "type": "array", "items": {"type": "string", "format": "date", "enum": ["x"]},
        "minItems": 1}}}))),
    ("a property named like a keyword", msg(output_config=fmt({
        **OBJ, "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]}))),
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


def test_our_params_for_every_catalogued_model_are_accepted(fake: FakeAnthropic) -> None:
    """Every catalogue model the Models API serves as usable, with the facts it serves."""
    request = LLMRequest(system=(SystemBlock("s", cache=True),), messages=(USER,),
                         tools=(tool(OBJ),), tool_choice="auto", output_schema=OBJ)
    checked = 0
    for model, entry in load().entries.items():
        got, info, _ = call(fake, {}, f"/v1/models/{model}", "GET")
        assert got == 200, model  # the fake knows every model we price
        if info["lifecycle"] == "retired":
            continue
        body = build_params(request, model, entry, max_tokens_floor=16_000,
                            effort="medium", facts=parse(info))
        got, answer, _ = call(fake, body)
        assert got == 200, (model, answer)
        checked += 1
    assert checked >= 12


VERSIONED = [
    ("no anthropic-version header", None, msg(), 400, "header is required"),
    ("unknown anthropic-version", "2025-01-01", msg(), 400, "not a valid version"),
    ("2023-06-01: non-default temperature on a 5.5 model", "2023-06-01",
     msg(temperature=0.2), 400, "non-default sampling"),
]


@pytest.mark.parametrize(("version", "body", "status", "needle"),
                         [v[1:] for v in VERSIONED], ids=[v[0] for v in VERSIONED])
def test_strict_mode_is_keyed_on_the_version_header(fake: FakeAnthropic, version: str | None,
                                                    body: dict[str, Any], status: int,
                                                    needle: str) -> None:
    got, answer, headers = call(fake, body, version=version)
    assert got == status and answer["type"] == "error", answer
    assert needle in answer["error"]["message"]
    assert answer["request_id"] == headers["request-id"]  # the real error body shape


def test_the_old_version_accepts_what_only_the_new_one_rejects(fake: FakeAnthropic) -> None:
    for body in (msg(temperature=1), msg(model="claude-haiku-4-5", temperature=0.0),
                 msg(messages=[{"role": "user", "content": [{
                     "type": "text", "text": "x", "citations": [{"type": "char_location",
                                                               "cited_text": "x"}]}]}])):
        got, answer, _ = call(fake, body, version="2023-06-01")
        assert got == 200, answer


def test_lenient_mode_skips_the_version_rules() -> None:
    with FakeAnthropic(strict=False) as lenient:
        got, _, _ = call(lenient, msg(), version=None)
    assert got == 200


def test_structured_outputs_follow_the_served_capability() -> None:
    with FakeAnthropic() as f:
        caps = f.models["claude-haiku-4-5"].info["capabilities"]
        caps["structured_outputs"]["supported"] = False
        got, answer, _ = call(f, {**msg(model="claude-haiku-4-5"), "output_config": fmt(OBJ)})
        assert got == 400 and "structured outputs" in answer["error"]["message"]
        _, info, _ = call(f, {}, "/v1/models/claude-haiku-4-5", "GET")
        assert info["capabilities"]["structured_outputs"] == {"supported": False}


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
    caps = info["capabilities"]
    assert caps["structured_outputs"]["supported"] and caps["batch"]["supported"]
    assert caps["effort"]["xhigh"]["supported"] and info["max_tokens"] == 128_000
    got, info, _ = call(fake, {}, "/v1/models/claude-sonnet-4-5", "GET")
    assert got == 200 and info["lifecycle"] == "retired"  # listed, as the SDK documents
    got, info, _ = call(fake, {}, "/v1/models/claude-nope-1", "GET")
    assert got == 404 and info["error"]["type"] == "not_found_error"
    got, listed, _ = call(fake, {}, "/v1/models", "GET")
    assert got == 200 and "claude-haiku-5-5" in [m["id"] for m in listed["data"]]


def test_cache_diagnostics_name_the_first_divergence(fake: FakeAnthropic) -> None:
    base = msg(system=[text("rules")], diagnostics={"previous_message_id": None})
    _, first, _ = call(fake, base)
    assert first["diagnostics"] is None  # opted in, nothing to compare with

    def then(**change: Any) -> Any:
        body = {**base, **change, "diagnostics": {"previous_message_id": first["id"]}}
        return call(fake, body)[1]["diagnostics"]

    assert then() is None
    assert then(messages=[USER, {"role": "assistant", "content": "a"}, USER]) is None
    assert then(system=[text("other rules")])["cache_miss_reason"]["type"] == "system_changed"
    assert then(tools=[tool(OBJ)])["cache_miss_reason"]["type"] == "tools_changed"
    assert then(model="claude-opus-5-5")["cache_miss_reason"]["type"] == "model_changed"
    changed = then(messages=[{"role": "user", "content": "another"}])["cache_miss_reason"]
    assert changed["type"] == "messages_changed" and changed["cache_missed_input_tokens"] > 0
    body = {**base, "diagnostics": {"previous_message_id": "msg_unknown"}}
    assert call(fake, body)[1]["diagnostics"]["cache_miss_reason"] == {
        "type": "previous_message_not_found"}
    assert "diagnostics" not in msg() and call(fake, msg())[1]["diagnostics"] is None


@pytest.mark.parametrize("status", [429, 529])
def test_overload_and_rate_limit_carry_retry_after(fake: FakeAnthropic, status: int) -> None:
    fake.enqueue(Reply.error(status))
    got, answer, headers = call(fake, msg())
    assert got == status and headers["retry-after"] == "1"
    assert answer["error"]["type"] in ("rate_limit_error", "overloaded_error")


def test_count_tokens_and_batched_requests_follow_the_version_rules(
        fake: FakeAnthropic) -> None:
    got, answer, _ = call(fake, msg(top_k=5), "/v1/messages/count_tokens")
    assert got == 400 and "top_k: Extra inputs" in answer["error"]["message"]
    got, batch, _ = call(fake, {"requests": [
        {"custom_id": "ok", "params": msg()},
        {"custom_id": "sampled", "params": msg(temperature=1)}]}, "/v1/messages/batches")
    assert got == 200
    fake.batches._finish(fake.batches.batches[batch["id"]])
    results = fake.batches.batches[batch["id"]].results
    assert results["ok"]["type"] == "succeeded"
    assert results["sampled"]["type"] == "errored"
    assert "temperature" in results["sampled"]["error"]["error"]["message"]

"""The Anthropic provider against the local fake Messages API (the real SDK runs)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from agents.errors import LLMError
from agents.providers.anthropic import AnthropicProvider, build_params
from agents.providers.base import LLMRequest, SystemBlock, TokenUsage
from agents.providers.catalogue import UnknownModel
from agents.providers.factory import OfflineProvider, cost_usd, is_offline, make_provider
from agents.providers.model_facts import ModelFacts
from agents.providers.settings import LLMSettings
from agents.settings import Settings
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

REQUEST = LLMRequest(
    system=(SystemBlock("rules"), SystemBlock("criterion", cache=True)),
    messages=({"role": "user", "content": "the case"},),
    max_tokens=300,
    output_schema={"type": "object", "properties": {}, "additionalProperties": False},
)


def llm(**over: object) -> LLMSettings:
    base: dict[str, object] = {"provider": "anthropic", "model": "claude-sonnet-5-5",
                               "sdk_max_retries": 0, "deadline_seconds": 5.0, "max_attempts": 3,
                               "backoff_base_seconds": 0.01, "requests_per_minute": 6000,
                               "check_cache_prefixes": False}
    return LLMSettings(**{**base, **over})



_made: list[AnthropicProvider] = []


@pytest.fixture(autouse=True)
async def _close_providers() -> AsyncIterator[None]:
    """Close every SDK client in the test's own loop (an unclosed one is closed by the
    garbage collector later, in a closed loop, and logs an ERROR into another test)."""
    yield
    while _made:
        await _made.pop().aclose()


def provider(fake: FakeAnthropic, **over: object) -> AnthropicProvider:
    p = AnthropicProvider(llm(**over), base_url=fake.base_url)
    _made.append(p)
    return p


def test_params_mark_the_cacheable_prefix_and_ask_for_structured_output() -> None:
    # structured output where the Models API says the model has it (unknown: not sent)
    params = build_params(REQUEST, "m", facts=ModelFacts(id="m", structured_outputs=True))
    assert params["system"] == [
        {"type": "text", "text": "rules"},
        {"type": "text", "text": "criterion", "cache_control": {"type": "ephemeral"}}]
    assert params["output_config"]["format"]["type"] == "json_schema"
    assert "tools" not in params and "tool_choice" not in params
    with_tools = build_params(LLMRequest(system=(), messages=(), tools=({"name": "t"},)), "m")
    assert with_tools["tool_choice"] == {"type": "auto"} and "system" not in with_tools


async def test_a_message_becomes_a_response_with_usage(fake: FakeAnthropic) -> None:
    fake.enqueue(Reply.message(text='{"a": 1}', input_tokens=10, output_tokens=5,
                               cache_read=900, cache_write=0))
    resp = await provider(fake).complete(REQUEST)
    assert resp.text == '{"a": 1}' and resp.stop_reason == "end_turn" and resp.attempts == 1
    assert resp.usage == TokenUsage(10, 5, 900, 0)
    body = fake.message_requests()[0].body
    assert body["system"][1]["cache_control"] == {"type": "ephemeral"}
    assert body["output_config"]["format"]["schema"] == REQUEST.output_schema
    assert body["model"] == "claude-sonnet-5-5" and body["max_tokens"] == 16_000


async def test_tool_calls_are_returned(fake: FakeAnthropic) -> None:
    fake.enqueue(Reply.message(tool_use={"name": "render", "input": {"x": 1}}))
    resp = await provider(fake).complete(REQUEST)
    assert resp.stop_reason == "tool_use"
    assert [(c.name, c.input) for c in resp.tool_calls] == [("render", {"x": 1})]


@pytest.mark.parametrize("reason", ["max_tokens", "refusal"])
async def test_max_tokens_and_refusal_are_returned_not_raised(fake: FakeAnthropic,
                                                              reason: str) -> None:
    fake.enqueue(Reply.message(text="partial", stop_reason=reason))
    resp = await provider(fake).complete(REQUEST)
    assert resp.stop_reason == reason and resp.usage.output_tokens == 200


@pytest.mark.parametrize(("status", "kind"), [(429, "rate_limited"), (529, "overloaded"),
                                              (500, "server_error")])
async def test_retryable_errors_are_retried_and_slow_the_worker_down(
        fake: FakeAnthropic, status: int, kind: str) -> None:
    fake.enqueue(Reply.error(status, retry_after=0.2), Reply.message(text="ok"))
    p = provider(fake)
    resp = await p.complete(REQUEST)
    assert resp.text == "ok" and resp.attempts == 2
    assert len(fake.message_requests()) == 2
    if status in (429, 529):  # a shared cool-down was set for every later call
        assert p.budget.cooldown.until > 0
        first, second = fake.message_requests()
        assert second.at - first.at >= 0.2


async def test_retries_stop_at_max_attempts_with_the_error_kind(fake: FakeAnthropic) -> None:
    fake.responder = lambda body: Reply.error(529)
    with pytest.raises(LLMError) as err:
        await provider(fake, max_attempts=2).complete(REQUEST)
    assert err.value.kind == "overloaded" and err.value.retryable
    assert len(fake.message_requests()) == 2


async def test_retry_after_beyond_the_deadline_fails_fast(fake: FakeAnthropic) -> None:
    fake.enqueue(Reply.error(429, retry_after=600))
    with pytest.raises(LLMError) as err:
        await provider(fake, deadline_seconds=2.0).complete(REQUEST)
    assert err.value.kind == "rate_limited" and err.value.retry_after == 600
    assert len(fake.message_requests()) == 1


@pytest.mark.parametrize(("status", "kind"), [(400, "bad_request"), (401, "auth"),
                                              (403, "auth"), (404, "not_found"),
                                              (413, "request_too_large")])
async def test_permanent_errors_are_not_retried(fake: FakeAnthropic, status: int,
                                                kind: str) -> None:
    fake.enqueue(Reply.error(status))
    with pytest.raises(LLMError) as err:
        await provider(fake).complete(REQUEST)
    assert err.value.kind == kind and not err.value.retryable and err.value.status == status
    assert len(fake.message_requests()) == 1


async def test_a_slow_answer_hits_our_deadline(fake: FakeAnthropic) -> None:
    fake.responder = lambda body: Reply.message(text="late", delay=3.0)
    with pytest.raises(LLMError) as err:
        await provider(fake, deadline_seconds=0.5).complete(REQUEST)
    assert err.value.kind == "timeout" and err.value.retryable


async def test_connection_refused_is_a_retryable_connection_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    with FakeAnthropic() as dead:
        url = dead.base_url
    p = AnthropicProvider(llm(max_attempts=1), base_url=url)
    _made.append(p)
    with pytest.raises(LLMError) as err:
        await p.complete(REQUEST)
    assert err.value.kind == "connection" and err.value.retryable


def test_factory_refuses_an_unknown_model_and_prices_from_the_catalogue() -> None:
    assert is_offline(make_provider(Settings()))
    assert isinstance(make_provider(Settings()), OfflineProvider)
    s = Settings(llm=llm())
    assert make_provider(s).name == "anthropic"
    with pytest.raises(UnknownModel, match="not in the model catalogue"):
        make_provider(Settings(llm=llm(model="claude-nonexistent-9")))
    usage = TokenUsage(1_000_000, 1_000_000, 1_000_000, 1_000_000)
    assert cost_usd(usage, "claude-sonnet-5-5", s.llm) == pytest.approx(2 + 10 + 0.1 + 2.5)
    assert cost_usd(usage, "claude-sonnet-5-5-20261001", s.llm) == pytest.approx(14.6)

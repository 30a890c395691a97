"""What the real API sends, through the real SDK: error kinds, the spend-limit stop, the
thinking blocks kept verbatim, the start-up model check and the cache-prefix report."""

from __future__ import annotations

import asyncio
import logging
from datetime import date

import pytest
from prometheus_client import generate_latest

from agents.errors import AgentsError, LLMError
from agents.providers.anthropic import AnthropicProvider
from agents.providers.base import LLMRequest, SystemBlock
from agents.providers.startup import check_model, check_provider, report_cache_prefixes
from streams.metrics import Metrics
from streams.settings import LLMSettings
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

REQUEST = LLMRequest(system=(SystemBlock("rules", cache=True),),
                     messages=({"role": "user", "content": "the case"},), max_tokens=300)


def llm(**over: object) -> LLMSettings:
    base: dict[str, object] = {"provider": "anthropic", "deadline_seconds": 5.0,
                               "max_attempts": 3, "backoff_base_seconds": 0.01,
                               "requests_per_minute": 6000, "check_cache_prefixes": False}
    return LLMSettings(**{**base, **over})


def provider(fake: FakeAnthropic, **over: object) -> AnthropicProvider:
    return AnthropicProvider(llm(**over), base_url=fake.base_url)


@pytest.mark.parametrize(("reply", "kind", "retryable"), [
    (Reply.spend_limit(), "spend_limit", False),
    (Reply.error(429, message="Your API usage limits have been reached"), "spend_limit", False),
    (Reply.error(402, message="credit balance too low"), "billing", False),
    (Reply.error(413, message="request exceeds the maximum size"), "request_too_large", False),
    (Reply.error(400, message="prompt is too long: model_context_window_exceeded"),
     "context_window_exceeded", False),
    (Reply.error(404, error_type="not_found_error"), "not_found", False),
    (Reply.error(504, retry_after=0.01), "server_error", True),
    (Reply.error(429, retry_after=0.01), "rate_limited", True),
])
async def test_error_kinds(fake: FakeAnthropic, reply: Reply, kind: str,
                           retryable: bool) -> None:
    fake.enqueue(reply)
    fake.responder = lambda body: Reply.error(500, message="still failing")
    with pytest.raises(LLMError) as err:
        await provider(fake, max_attempts=1).complete(REQUEST)
    assert (err.value.kind, err.value.retryable) == (kind, retryable)


async def test_a_spend_limit_halts_without_retries_until_an_answer_clears_it(
        fake: FakeAnthropic, caplog: pytest.LogCaptureFixture) -> None:
    """No retry storm: each call is one request; the worker's breaker (not the provider)
    stops new work, and its probe's answer resumes everything (gauge back to 0)."""
    metrics = Metrics.create()
    p = provider(fake)
    await check_provider(p, p.settings, metrics)
    fake.enqueue(Reply.spend_limit(), Reply.spend_limit())
    for _ in range(2):
        with pytest.raises(LLMError) as err:
            await p.complete(REQUEST)
        assert err.value.kind == "spend_limit" and not err.value.retryable
    assert len(fake.message_requests()) == 2  # one request per call, never retried
    assert sum(r.levelno == logging.ERROR and r.name == "agents.providers.anthropic"
               for r in caplog.records) == 1  # logged once per halt
    halted = 'judgeflow_llm_halted{provider="anthropic",reason="spend_limit"}'
    assert f"{halted} 1.0" in generate_latest(metrics.registry).decode()
    assert p.halted is not None
    await p.complete(REQUEST)  # the limit was raised: the probe is answered
    assert p.halted is None
    assert f"{halted} 0.0" in generate_latest(metrics.registry).decode()


async def test_thinking_blocks_are_kept_verbatim(fake: FakeAnthropic) -> None:
    fake.enqueue(Reply.message(tool_use={"name": "t", "input": {"a": 1}}))
    resp = await provider(fake).complete(REQUEST)
    kinds = [b["type"] for b in resp.content]
    assert kinds == ["thinking", "tool_use"] and resp.content[0]["signature"]
    assert resp.assistant_turn() == {"role": "assistant", "content": list(resp.content)}


async def test_the_sdk_does_not_retry_by_itself(fake: FakeAnthropic) -> None:
    fake.enqueue(Reply.error(529, retry_after=0.01), Reply.message(text="ok"))
    resp = await provider(fake).complete(REQUEST)
    assert resp.attempts == 2 and len(fake.message_requests()) == 2


@pytest.mark.parametrize(("model", "error"), [
    ("claude-sonnet-4-5", "retired on 2026-11-30"),
    ("claude-nope-1", "not in the model catalogue"),
])
async def test_start_up_refuses_unknown_and_retired_models(fake: FakeAnthropic, model: str,
                                                           error: str) -> None:
    p = provider(fake)
    p.model = model
    with pytest.raises(AgentsError, match=error):
        await check_model(p, p.settings)


async def test_start_up_refuses_a_model_the_api_does_not_know(fake: FakeAnthropic) -> None:
    fake.models.pop("claude-opus-5-5")
    p = provider(fake, model="claude-opus-5-5")
    with pytest.raises(AgentsError, match="unknown to the Models API"):
        await check_model(p, p.settings)


async def test_start_up_warns_about_a_deprecated_model(
        fake: FakeAnthropic, caplog: pytest.LogCaptureFixture) -> None:
    p = provider(fake, model="claude-opus-4-5")
    await check_model(p, p.settings, today=date(2026, 12, 1))
    assert any(r.levelno == logging.WARNING and "retires on 2027-01-22" in r.getMessage()
               for r in caplog.records)
    with pytest.raises(AgentsError, match="effort 'xhigh' is not accepted"):
        await check_model(p, llm(model="claude-opus-4-5", effort="xhigh"))


async def test_each_cache_breakpoint_is_reported_against_the_model_minimum(
        fake: FakeAnthropic) -> None:
    small, big = SystemBlock("rules " * 20, cache=True), SystemBlock("x" * 8000, cache=True)
    request = LLMRequest(system=(small, SystemBlock("uncached"), big), messages=())
    reports = await report_cache_prefixes(provider(fake), request)
    assert [(r.breakpoint, r.caches) for r in reports] == [(1, False), (3, True)]
    assert all(r.minimum == 2048 for r in reports)
    counted = [r for r in fake.requests if r.path.endswith("/count_tokens")]
    assert len(counted) == 2 and fake.message_requests() == []


async def test_the_provider_counts_each_distinct_prefix_once(
        fake: FakeAnthropic, caplog: pytest.LogCaptureFixture) -> None:
    p = provider(fake, check_cache_prefixes=True)
    other = LLMRequest(system=(SystemBlock("other rules", cache=True),), messages=REQUEST.messages)
    for request in (REQUEST, REQUEST, other, REQUEST):
        await p.complete(request)
        await asyncio.gather(*p._background)
    counted = [r for r in fake.requests if r.path.endswith("/count_tokens")]
    assert len(counted) == 2 and len(fake.message_requests()) == 4
    assert sum("will NOT cache it" in r.getMessage() for r in caplog.records) == 2
    await p.aclose()

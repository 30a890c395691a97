"""The LLM session: one place that records calls, tokens and cost, batch pricing included."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from agents.errors import LLMError
from agents.providers.base import LLMRequest, LLMResponse, TokenUsage
from agents.providers.session import LLMSession
from agents.providers.settings import LLMSettings
from agents.settings import Settings
from streams.metrics import Metrics
from tests.unit.agents.debrief.support import ScriptedProvider

MILLION = 1_000_000


def reply(usage: TokenUsage, *, batch: bool = False, attempts: int = 1) -> LLMResponse:
    return LLMResponse(text="", tool_calls=(), stop_reason="end_turn", usage=usage,
                       model="claude-sonnet-5-5", latency_ms=250, attempts=attempts,
                       batch=batch)


async def test_a_session_sums_tokens_calls_and_cost_and_counts_metrics() -> None:
    registry = CollectorRegistry()
    metrics = Metrics.create(registry)
    provider = ScriptedProvider(
        reply(TokenUsage(input_tokens=MILLION), attempts=2),  # $2 at list price
        reply(TokenUsage(output_tokens=MILLION), batch=True),  # $10, half off in a batch
        LLMError("overloaded", "HTTP 529", retryable=True, status=529))
    llm = LLMSettings(model="claude-sonnet-5-5")
    session = LLMSession(provider, llm, metrics, "judge")
    request = LLMRequest(system=(), messages=({"role": "user", "content": "hi"},))
    await session.complete(request)
    await session.complete(request)
    with pytest.raises(LLMError):
        await session.complete(request)
    usage = session.usage_record()
    # llm_calls counts answered calls: the 2-attempt answer is one, the 529 none (a rejected
    # attempt is not billed; the metric counts it by status)
    assert (usage.input_tokens, usage.output_tokens, usage.llm_calls) == (MILLION, MILLION, 2)
    assert usage.cost_usd == pytest.approx(2.0 + 5.0)

    def sample(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, {"worker": "judge", "provider": "anthropic",
                                                **labels})
    assert sample("judgeflow_llm_calls_total", status="ok") == 2
    assert sample("judgeflow_llm_calls_total", status="overloaded") == 1
    assert sample("judgeflow_llm_tokens_total", type="input") == MILLION
    assert sample("judgeflow_llm_tokens_total", type="cache_read") is None
    assert sample("judgeflow_llm_cost_usd_total") == pytest.approx(7.0)


def test_a_session_without_calls_costs_nothing() -> None:
    session = LLMSession(ScriptedProvider(), Settings().llm, None, "debrief", model="offline")
    assert session.usage_record().cost_usd == 0.0 and session.calls == 0


async def test_each_call_is_priced_on_its_own_prompt_length() -> None:
    """Two Haiku 5.5 calls of 60K prompt tokens each: both in the <= 100K tier ($0.10 in,
    $0.50 out), although their sum (120K) would be in the long tier."""
    def haiku(usage: TokenUsage) -> LLMResponse:
        return LLMResponse(text="", tool_calls=(), stop_reason="end_turn", usage=usage,
                           model="claude-haiku-5-5", latency_ms=5, attempts=1)

    provider = ScriptedProvider(haiku(TokenUsage(60_000, 1_000)),
                                haiku(TokenUsage(60_000, 1_000)))
    session = LLMSession(provider, LLMSettings(model="claude-haiku-5-5"), None, "judge")
    request = LLMRequest(system=(), messages=({"role": "user", "content": "hi"},))
    await session.complete(request)
    await session.complete(request)
    one = 60_000 * 0.10 / MILLION + 1_000 * 0.50 / MILLION
    assert session.usage_record().cost_usd == pytest.approx(2 * one)

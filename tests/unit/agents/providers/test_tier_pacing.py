"""The provider against a fake API with a small tier: every answer's headers reach the
pacer, and a worker that keeps more requests in flight than the tier allows is paced
instead of answered 429 (the real SDK runs)."""

from __future__ import annotations

import asyncio
import time

import pytest

from agents.providers.anthropic import AnthropicProvider
from agents.providers.base import LLMRequest, SystemBlock
from agents.providers.limits import Budget, RetryPolicy
from agents.providers.settings import LLMSettings
from tools.fakes.fake_anthropic import FakeAnthropic, Reply
from tools.fakes.fake_tier import Tier

REQUEST = LLMRequest(system=(SystemBlock("rules"),),
                     messages=({"role": "user", "content": "the case"},), max_tokens=300)


def make(fake: FakeAnthropic, minute: float, concurrency: int = 8) -> AnthropicProvider:
    s = LLMSettings(provider="anthropic", sdk_max_retries=0, deadline_seconds=20,
                    max_attempts=3, requests_per_minute=1000, concurrency=concurrency,
                    check_cache_prefixes=False)
    budget = Budget.create(RetryPolicy(20, 3, 0.01), requests_per_minute=1000,
                           concurrency=concurrency, minute_seconds=minute)
    return AnthropicProvider(s, base_url=fake.base_url, api_key="test", budget=budget)


async def test_headers_of_answers_and_errors_reach_the_pacer() -> None:
    with FakeAnthropic(tier=Tier(rpm=500, itpm=90_000, otpm=9_000)) as fake:
        p = make(fake, 60.0)
        try:
            await p.complete(REQUEST)
            assert p.budget.pacer.limits() == {"requests": 500, "input-tokens": 90_000,
                                               "output-tokens": 9_000}
            assert p.budget.pacer.learned["output-tokens"] == 200  # the fake's usage
            fake.enqueue(Reply.error(400), Reply.error(400))
            fake.state.limits.admit(80_000, time.monotonic())  # someone else spent input
            with pytest.raises(Exception, match="invalid_request_error"):
                await p.complete(REQUEST)
            level = p.budget.pacer.buckets["input-tokens"].level
            assert level < 11_000  # the error's headers re-synced the bucket
        finally:
            await p.aclose()


async def test_a_tight_tier_is_paced_without_429() -> None:
    tier = Tier(rpm=30, itpm=10**6, otpm=10**6, minute_seconds=1.0)  # 30 requests a second
    # some latency, as on the API: the first burst has arrived before the first answer
    with FakeAnthropic(tier=tier, latency=0.05) as fake:
        p = make(fake, 1.0, concurrency=8)
        try:
            started = time.monotonic()
            await asyncio.gather(*(p.complete(REQUEST) for _ in range(75)))
            took = time.monotonic() - started
        finally:
            await p.aclose()
        assert fake.state.limits.refused == {}  # paced before the server had to refuse
        # 30 at once (a full bucket, minus the reserve), then 30 a second: >= 1.4 s
        assert took >= 1.4
        assert len(fake.message_requests()) == 75

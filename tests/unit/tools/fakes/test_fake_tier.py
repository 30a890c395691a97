"""The fake API's token buckets: pure arithmetic with the time passed in, then over HTTP."""

from __future__ import annotations

from datetime import datetime

import pytest

from tests.unit.tools.fakes.test_fake_anthropic import call, msg
from tools.fakes.fake_anthropic import FakeAnthropic
from tools.fakes.fake_tier import Buckets, Tier, retry_after

TIER = Tier(rpm=60, itpm=6_000, otpm=600, minute_seconds=60.0)


def test_a_full_bucket_admits_then_refuses_with_the_time_until_room() -> None:
    b = Buckets(TIER, now=0.0)
    assert b.admit(5_000, now=0.0) is None
    refusal = b.admit(2_000, now=0.0)  # 1,000 left, 100 a second refill
    assert refusal is not None and refusal.dimension == "input-tokens"
    assert refusal.retry_after == pytest.approx(10.0)
    assert b.admit(2_000, now=10.0) is None  # refilled exactly in time
    assert b.spent["input-tokens"] == 7_000 and b.refused == {"input-tokens": 1}


@pytest.mark.parametrize(("tier", "calls", "dimension"), [
    (Tier(rpm=2, itpm=10**6, otpm=10**6), [(10, 0)] * 3, "requests"),
    (Tier(rpm=100, itpm=1_000, otpm=10**6), [(600, 0), (600, 0)], "input-tokens"),
    # output is charged on completion: an answer longer than the bucket blocks the next
    (Tier(rpm=100, itpm=10**6, otpm=100), [(10, 150), (10, 0)], "output-tokens"),
])
def test_each_dimension_can_refuse(tier: Tier, calls: list[tuple[int, int]],
                                   dimension: str) -> None:
    b = Buckets(tier, now=0.0)
    refusals = []
    for inp, out in calls:
        r = b.admit(inp, now=0.0)
        refusals.append(r)
        if r is None:
            b.charge_output(out, now=0.0)
    assert all(r is None for r in refusals[:-1])
    last = refusals[-1]
    assert last is not None and last.dimension == dimension and last.retry_after > 0


def test_a_request_bigger_than_the_bucket_waits_for_a_full_one() -> None:
    b = Buckets(TIER, now=0.0)
    assert b.admit(9_000, now=0.0) is None  # full bucket: admitted, level goes negative
    refusal = b.admit(9_000, now=0.0)
    assert refusal is not None and refusal.retry_after == pytest.approx(90.0)


def test_refill_never_passes_the_limit_and_headers_report_it() -> None:
    b = Buckets(TIER, now=0.0)
    b.admit(3_000, now=0.0)
    h = b.headers(now=15.0, wall=1_000_000.0)  # 1,500 refilled: 4,500 left
    assert h["anthropic-ratelimit-input-tokens-remaining"] == "4500"
    assert h["anthropic-ratelimit-requests-remaining"] == "60"
    reset = datetime.fromisoformat(h["anthropic-ratelimit-input-tokens-reset"])
    assert reset.timestamp() == pytest.approx(1_000_015.0)  # 1,500 short at 100 a second
    assert h["anthropic-ratelimit-tokens-limit"] == "6000"  # the more depleted bucket
    assert b.headers(now=1_000.0)["anthropic-ratelimit-input-tokens-remaining"] == "6000"


def test_a_short_minute_scales_the_refill() -> None:
    b = Buckets(Tier(rpm=60, itpm=6_000, otpm=600, minute_seconds=6.0), now=0.0)
    b.admit(6_000, now=0.0)
    assert b.admit(1_000, now=0.5) is not None  # 500 refilled in half a second
    assert b.admit(1_000, now=1.0) is None
    assert retry_after(0.25, b.tier) == "0.250" and retry_after(0.25, TIER) == "1"


def test_over_http_the_fake_answers_429_and_counts_what_it_refused() -> None:
    with FakeAnthropic(tier=Tier(rpm=2, itpm=10**6, otpm=10**6)) as fake:
        first = [call(fake, msg()) for _ in range(2)]
        status, body, headers = call(fake, msg())
    assert [s for s, _, _ in first] == [200, 200]
    assert first[1][2]["anthropic-ratelimit-requests-remaining"] == "0"
    assert status == 429 and body["error"]["type"] == "rate_limit_error"
    assert "2 requests per minute" in body["error"]["message"]
    assert 0 < int(headers["retry-after"]) <= 30
    assert fake.state.limits.refused == {"requests": 1}
    assert len(fake.message_requests()) == 3

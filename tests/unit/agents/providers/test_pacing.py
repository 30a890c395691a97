"""The tier pacer with a fake clock: settings until headers, headers after, before a 429."""

from __future__ import annotations

import pytest

from agents.providers.pacing import Cost, Pacer, read_headers


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def headers(rpm: tuple[int, int], itpm: tuple[int, int] | None = None,
            otpm: tuple[int, int] | None = None) -> dict[str, str]:
    out: dict[str, str] = {}
    for dim, pair in (("requests", rpm), ("input-tokens", itpm), ("output-tokens", otpm)):
        if pair is not None:
            out[f"anthropic-ratelimit-{dim}-limit"] = str(pair[0])
            out[f"anthropic-ratelimit-{dim}-remaining"] = str(pair[1])
            out[f"anthropic-ratelimit-{dim}-reset"] = "2026-12-01T00:00:00Z"
    return out


def test_before_headers_the_setting_paces_requests_with_a_burst() -> None:
    clock = Clock()
    p = Pacer(60, burst=2, clock=clock)
    big = Cost(1, 10**9, 10**9)  # tokens are not limited until the tier is known
    assert p.delay(big) == 0
    p.take(big)
    p.take(big)
    assert p.delay(big) == pytest.approx(1.0)  # one request a second
    clock.now += 0.5
    assert p.delay(big) == pytest.approx(0.5)
    clock.now += 10
    assert p.delay(big) == 0 and p.buckets["requests"].level_at(clock.now) == 2


@pytest.mark.parametrize(("hdrs", "cost", "wait"), [
    # plenty left in every bucket: send now
    (headers((1000, 900), (60_000, 50_000), (6_000, 5_000)), Cost(1, 2_000, 300), 0.0),
    # input bucket: 2,000 + reserve 3,000 needed, 1,000 left, refill 1,000/s -> 4 s
    (headers((1000, 900), (60_000, 1_000), (6_000, 5_000)), Cost(1, 2_000, 300), 4.0),
    # requests bucket: 1 + 0.05 * 60 = 4 needed, none left, refill 1/s -> 4 s
    (headers((60, 0), (60_000, 50_000)), Cost(1, 10, 10), 4.0),
    # output bucket: 300 + 300 needed, 0 left at 100/s -> 6 s
    (headers((1000, 900), (60_000, 50_000), (6_000, 0)), Cost(1, 10, 300), 6.0),
    # a request bigger than the bucket waits for a full bucket, not forever
    (headers((1000, 900), (60_000, 0)), Cost(1, 100_000, 0), 60.0),
    # the combined tokens-* header stands in for missing specific ones
    ({"anthropic-ratelimit-tokens-limit": "60000", "anthropic-ratelimit-tokens-remaining": "0",
      "anthropic-ratelimit-requests-limit": "100", "anthropic-ratelimit-requests-remaining":
      "100"}, Cost(1, 3_000, 0), 6.0),
])
def test_headers_decide_the_wait(hdrs: dict[str, str], cost: Cost, wait: float) -> None:
    clock = Clock()
    p = Pacer(50, clock=clock)
    assert p.observe(hdrs)
    assert p.delay(cost) == pytest.approx(wait)


def test_the_tier_replaces_the_setting_and_refills_continuously() -> None:
    clock = Clock()
    p = Pacer(5, clock=clock)  # a low setting ...
    p.observe(headers((600, 600)))  # ... is replaced by the tier the server reports
    for _ in range(500):
        assert p.delay(Cost()) == 0
        p.take(Cost())
    clock.now += 1.0  # 10 requests a second refill
    assert p.limits()["requests"] == pytest.approx(600)
    assert p.buckets["requests"].level_at(clock.now) == pytest.approx(110)


def test_steady_state_runs_at_the_refill_rate_and_never_overdraws() -> None:
    """Simulate a server bucket and a client that waits as told: no 429, ~100% of refill."""
    clock = Clock()
    limit, minute = 60_000, 60.0
    server, at = float(limit), clock.now
    p = Pacer(50, clock=clock, minute_seconds=minute)
    p.observe(headers((10_000, 10_000), (limit, limit)))
    cost = Cost(1, 1_500, 0)
    spent, overdrawn, start = 0.0, 0, clock.now
    for _ in range(400):
        clock.now += p.delay(cost)
        server = min(limit, server + (clock.now - at) * limit / minute)
        at = clock.now
        if server < cost.input_tokens:
            overdrawn += 1
        server -= cost.input_tokens
        spent += cost.input_tokens
        p.take(cost)
        p.observe(headers((10_000, 10_000), (limit, int(server))))
    allowed = limit + (clock.now - start) * limit / minute
    assert overdrawn == 0
    assert spent / allowed > 0.95


def test_output_in_flight_is_subtracted_until_its_answer_is_seen() -> None:
    clock = Clock()
    p = Pacer(50, clock=clock)
    cost = Cost(1, 0, 1_000)
    p.take(cost)
    p.take(cost)
    p.observe(headers((1000, 1000), None, (6_000, 6_000)))  # the server charged neither yet
    assert p.buckets["output-tokens"].level == 4_000
    p.release(cost, Cost(1, 0, 800))  # one answer: 800, not 1,000, charged at its end
    assert p.buckets["output-tokens"].level == 4_200
    p.observe(headers((1000, 1000), None, (6_000, 5_200)))
    assert p.buckets["output-tokens"].level == 4_200


def test_headers_never_make_a_bucket_fuller_than_our_own_account() -> None:
    clock = Clock()
    p = Pacer(50, clock=clock)
    p.observe(headers((60, 60)))
    for _ in range(10):
        p.take(Cost())
    # an answer whose headers were written before the last requests arrived
    p.observe(headers((60, 55)))
    assert p.buckets["requests"].level == 50
    # another client of the organisation spent more than we know of: the server wins
    p.observe(headers((60, 20)))
    assert p.buckets["requests"].level == 20


def test_learned_costs_replace_the_first_estimate() -> None:
    p = Pacer(50, clock=Clock())
    estimate = Cost(1, 9_000, 1_024)
    assert p.expected(estimate) == estimate
    p.learn(2_000, 300)
    p.learn(3_000, 300)
    assert p.expected(estimate) == Cost(1, 2_200, 300)


@pytest.mark.parametrize(("hdrs", "parsed"), [
    ({}, {}),
    ({"anthropic-ratelimit-requests-limit": "x", "anthropic-ratelimit-requests-remaining": "1"},
     {}),
    ({"Anthropic-RateLimit-Requests-Limit": "50", "anthropic-ratelimit-requests-remaining":
      "-3"}, {"requests": (50, 0)}),
])
def test_read_headers_skips_what_it_cannot_read(hdrs: dict[str, str],
                                                parsed: dict[str, tuple[int, int]]) -> None:
    assert read_headers(hdrs) == parsed

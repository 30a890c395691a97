"""Rate limiter and cool-down arithmetic with a fake clock."""

from __future__ import annotations

from agents.providers.limits import CoolDown, RateLimiter, RetryPolicy


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_rate_limiter_allows_a_burst_then_spaces_requests() -> None:
    clock = Clock()
    lim = RateLimiter(per_minute=60, burst=2, clock=clock)
    assert lim.delay() == 0
    lim.tokens -= 1
    assert lim.delay() == 0
    lim.tokens -= 1
    assert lim.delay() == 1.0  # one request a second
    clock.now += 0.5
    assert lim.delay() == 0.5
    clock.now += 10
    assert lim.delay() == 0 and lim.tokens == 2  # never more than the burst


def test_cooldown_only_moves_forward() -> None:
    clock = Clock()
    cd = CoolDown(clock)
    cd.trip(5)
    cd.trip(1)
    assert cd.remaining() == 5
    clock.now += 4
    assert cd.remaining() == 1


def test_backoff_prefers_retry_after_and_is_capped_otherwise() -> None:
    p = RetryPolicy(deadline_seconds=60, max_attempts=5, backoff_base=1, backoff_max=4)
    assert p.backoff(1, 7.0) == 7.0
    assert 0.5 <= p.backoff(1, None) <= 1
    assert 2 <= p.backoff(10, None) <= 4

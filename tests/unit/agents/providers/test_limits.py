"""Cool-down and retry arithmetic with a fake clock (the pacer: test_pacing.py)."""

from __future__ import annotations

from agents.providers.limits import CoolDown, RetryPolicy


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


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

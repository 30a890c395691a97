"""The benchmark's arithmetic (pure)."""

from __future__ import annotations

import pytest

from agents.judge.bench import cache_share, ideal_with_slow_call
from agents.providers.base import LLMRequest, SystemBlock


def test_ideal_time_with_one_slot_held_by_a_slow_call() -> None:
    # 8 slots, 0.5 s calls, one slot held 5 s: 7 slots do 70 calls meanwhile
    assert ideal_with_slow_call(70, 5.0, 8, 0.5) == pytest.approx(5.0)
    assert ideal_with_slow_call(78, 5.0, 8, 0.5) == pytest.approx(5.5)
    assert ideal_with_slow_call(3, 5.0, 1, 0.5) == pytest.approx(6.5)


def test_cache_share_counts_repeated_prefixes_only() -> None:
    a = LLMRequest(system=(SystemBlock("x" * 100, cache=True),),
                   messages=({"role": "user", "content": "case one"},))
    b = LLMRequest(system=a.system, messages=({"role": "user", "content": "case two"},))
    c = LLMRequest(system=(SystemBlock("y" * 100),), messages=a.messages)
    share, largest = cache_share([a, b, c])
    assert 0.2 < share < 0.3 and largest > 100  # b reuses a's prefix
    assert cache_share([a])[0] == 0.0

"""The benchmark's arithmetic (pure)."""

from __future__ import annotations

import pytest

from tools.bench.judge import ideal_with_slow_call
from tools.bench.judge_phase import cache_served_share


def test_ideal_time_with_one_slot_held_by_a_slow_call() -> None:
    # 8 slots, 0.5 s calls, one slot held 5 s: 7 slots do 70 calls meanwhile
    assert ideal_with_slow_call(70, 5.0, 8, 0.5) == pytest.approx(5.0)
    assert ideal_with_slow_call(78, 5.0, 8, 0.5) == pytest.approx(5.5)
    assert ideal_with_slow_call(3, 5.0, 1, 0.5) == pytest.approx(6.5)


def test_cache_share_is_reads_over_all_input_tokens() -> None:
    cold = {"input_tokens": 500, "cache_creation_input_tokens": 2500,
            "cache_read_input_tokens": 0, "output_tokens": 100}
    warm = {"input_tokens": 500, "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 2500, "output_tokens": 100}
    assert cache_served_share([cold, warm]) == pytest.approx(2500 / 6000)
    assert cache_served_share([cold]) == 0.0 and cache_served_share([]) == 0.0


def test_tier_share_counts_the_first_bucket_and_the_refill() -> None:
    from tools.bench.judge_tier import TierUse

    stats = {"tier": {"rpm": 60, "itpm": 6_000, "otpm": 600, "minute_seconds": 6.0},
             "spent": {"requests": 90, "input-tokens": 11_400, "output-tokens": 300},
             "refused": {"requests": 2}, "first": 10.0, "last": 16.0}
    use = TierUse.from_stats(stats)
    # one minute of span: the full bucket plus one minute of refill = twice the limit
    assert use.allowed("input-tokens") == 12_000
    assert use.share("input-tokens") == pytest.approx(0.95)
    assert use.share("requests") == pytest.approx(0.75)
    assert use.binding == "input-tokens" and use.refusals == 2


def test_tier_share_of_an_idle_fake_is_zero() -> None:
    from tools.bench.judge_tier import TierUse

    stats = {"tier": {"rpm": 60, "itpm": 6_000, "otpm": 600, "minute_seconds": 60.0},
             "spent": {"requests": 0.0}, "refused": {}, "first": None, "last": None}
    use = TierUse.from_stats(stats)
    assert use.span == 0 and use.share("output-tokens") == 0.0

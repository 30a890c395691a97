"""Pure parts of replay: range options, group names, output-token calibration, the
estimator's cache pricing, the progress line."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agents.judge.chart_tools import DEFINITIONS
from agents.providers.base import LLMRequest, SystemBlock, TokenUsage
from agents.providers.factory import cost_usd
from agents.providers.settings import LLMSettings
from agents.replay.driver import Tally
from agents.replay.estimate import (
    OUTPUT_TOKENS_PER_CALL,
    TOOL_TURN_TOKENS,
    TOOL_TURNS,
    Estimator,
    output_per_call,
)
from agents.replay.plan import group_name, parse_offsets, parse_since
from agents.replay.run import progress_line
from streams.errors import StreamsError
from streams.produced import Series


def test_range_options() -> None:
    assert parse_offsets("0:120, 2:7") == {0: 120, 2: 7}
    assert parse_since("2026-11-30") == datetime(2026, 11, 30, tzinfo=UTC)
    assert parse_since("2026-11-30T08:00:00+01:00").utcoffset() is not None
    for bad in ("0-3", "a:1", ""):
        with pytest.raises(StreamsError):
            parse_offsets(bad)
    with pytest.raises(StreamsError, match="ISO time"):
        parse_since("yesterday")


def test_group_per_version_and_filter_set() -> None:
    plain = group_name("judge", "judge-v3+abc", {"task": None})
    assert plain == "judgeflow-replay.judge.judge-v3+abc"
    one = group_name("judge", "judge-v3+abc", {"criterion": "t2dm_dx"})
    other = group_name("judge", "judge-v3+abc", {"criterion": "on_sglt2i"})
    assert len({plain, one, other}) == 3 and one.startswith(plain + ".")


def test_output_tokens_calibrated_from_earlier_results() -> None:
    assert output_per_call("judge", None) == (OUTPUT_TOKENS_PER_CALL["judge"],
                                              "a fixed guess sized for a typical judge answer")
    s = Series()
    s.add("j1", "v1", "r1", {"output_tokens": 100, "llm_calls": 1})
    s.add("j2", "v1", "r2", {"output_tokens": 300, "llm_calls": 3})  # a repair: 3 calls
    assert output_per_call("judge", s) == (100, "mean of 4 earlier call(s)")


class Counting:
    name, model = "anthropic", "claude-sonnet-5-5"

    async def count_prefix_tokens(self, request: LLMRequest) -> int:
        return 3000 if request.messages else 2500  # prefix 2500 of 3000


async def test_estimate_prices_a_cacheable_prefix_as_one_write_then_reads() -> None:
    llm = LLMSettings(provider="anthropic")
    est = Estimator(Counting(), llm, 100, min_cache_tokens=2048)
    req = LLMRequest(system=(SystemBlock("skill", cache=True),),
                     messages=({"role": "user", "content": "case"},))
    for _ in range(3):
        await est.add(req)
    await est.add(None)  # decided in code: no call
    e = est.est
    assert (e.jobs, e.calls, e.input_tokens, e.cache_write_tokens, e.cache_read_tokens,
            e.output_tokens) == (4, 3, 1500, 2500, 5000, 300)
    want = cost_usd(TokenUsage(1500, 300, 5000, 2500), "claude-sonnet-5-5", llm)
    assert e.usd == pytest.approx(want)
    batch = Estimator(Counting(), llm, 100, min_cache_tokens=2048, batch=True)
    await batch.add(req)
    first = TokenUsage(500, 100, 0, 2500)
    assert batch.est.usd == pytest.approx(cost_usd(first, "claude-sonnet-5-5", llm, batch=True))
    assert batch.est.usd < cost_usd(first, "claude-sonnet-5-5", llm)


def test_progress_line(capsys: pytest.CaptureFixture[str]) -> None:
    t = Tally(total=10, seen=4, judged=3, usd=0.0123)
    progress_line(t)
    err = capsys.readouterr().err
    assert err.startswith("\rreplay: 4/10 done, 3 new result(s), $0.0123 so far, ETA ")


class PerChar:
    name, model = "anthropic", "claude-sonnet-5-5"

    def __init__(self) -> None:
        self.calls = 0

    async def count_prefix_tokens(self, request: LLMRequest) -> int:
        self.calls += 1
        return len(request.messages[0]["content"]) // 2  # 1 token per 2 characters


async def test_beyond_the_sample_tokens_come_from_the_measured_ratio() -> None:
    counter = PerChar()
    est = Estimator(counter, LLMSettings(provider="anthropic"), 10, min_cache_tokens=None)
    est.exact_counts = 2
    for n in (1000, 2000, 3000, 4000):
        await est.add(LLMRequest(system=(), messages=({"role": "user", "content": "x" * n},)))
    assert counter.calls == 2 and "sample" in est.est.counted
    assert est.est.input_tokens == pytest.approx(5000, rel=0.02)  # 500 + 1000 + ~1500 + ~2000


async def test_a_job_offered_the_chart_tools_is_priced_with_its_tool_turns() -> None:
    """The first turn (batched under --batch), then TOOL_TURNS live turns, each re-sending
    the conversation grown by a tool result, the cached prefix read from the cache."""
    llm = LLMSettings(provider="anthropic")
    req = LLMRequest(system=(SystemBlock("skill", cache=True),),
                     messages=({"role": "user", "content": "case"},), tools=DEFINITIONS)
    for batch in (False, True):
        est = Estimator(Counting(), llm, 100, min_cache_tokens=2048, batch=batch)
        await est.add(req)
        e = est.est
        assert (e.calls, e.tool_turns) == (1 + TOOL_TURNS, TOOL_TURNS)
        turns = [TokenUsage(500 + k * (TOOL_TURN_TOKENS + 100), 100, 2500, 0)
                 for k in range(1, TOOL_TURNS + 1)]
        want = cost_usd(TokenUsage(500, 100, 0, 2500), "claude-sonnet-5-5", llm,
                        batch=batch) + sum(cost_usd(t, "claude-sonnet-5-5", llm) for t in turns)
        assert e.usd == pytest.approx(want)
        assert e.input_tokens == 500 + sum(t.input_tokens for t in turns)

"""What ``judgeflow replay judge|debrief`` prints: the dry run (provider and model priced,
counts after the filters, batch pricing) and the budget stop line; unknown filter values."""

from __future__ import annotations

import pytest

from agents.errors import AgentsError
from agents.providers.base import LLMRequest, SystemBlock
from agents.providers.settings import LLMSettings
from agents.replay.cli_llm import dry_run_report, stop_line
from agents.replay.driver import Tally
from agents.replay.estimate import Estimate, Estimator
from agents.replay.plan import Plan
from agents.replay.run import Outcome
from agents.replay.targets import Filters, check_filter


def _outcome(provider: str, *, batch: bool = False) -> Outcome:
    e = Estimate(jobs=12, calls=11, read=97, filtered=80, already=5, usd=0.25)
    return Outcome("judge-v3+abc", Plan("g"), estimate=e, provider=provider,
                   model="claude-sonnet-5-5" if provider != "offline" else "offline",
                   batch=batch)


def test_dry_run_names_the_model_and_the_filtered_count() -> None:
    text = dry_run_report("HEAD: 97 record(s) in range", _outcome("anthropic"),
                          Filters(criterion="t2dm_dx"))
    assert "97 record(s) in range; 17 after --criterion t2dm_dx" in text
    assert "provider anthropic, model claude-sonnet-5-5" in text
    assert "already published under this version: 5" in text
    assert "$0.2500" in text and "batch" not in text


def test_offline_dry_run_says_no_calls() -> None:
    text = dry_run_report("HEAD", _outcome("offline"), Filters())
    assert "offline provider: no model calls, $0" in text and "after" not in text


async def test_batch_dry_run_is_half_the_live_one_and_says_why_runs_are_not() -> None:
    # the batch discount covers all usage, cache writes and reads included (the batch page:
    # "all usage is charged at 50%"): the batch estimate is exactly half the live one...
    class Counting:
        model = "claude-sonnet-5-5"

        async def count_prefix_tokens(self, request: LLMRequest) -> int:
            return 3000 if not request.messages else 3500

    request = LLMRequest(system=(SystemBlock("rules", cache=True),),
                         messages=({"role": "user", "content": "case"},))
    llm = LLMSettings(provider="anthropic", model="claude-sonnet-5-5")
    usd = {}
    for batch in (False, True):
        est = Estimator(Counting(), llm, 400, 1024, batch=batch)
        for _ in range(3):  # one cache write, then two reads
            await est.add(request)
        assert est.est.cache_write_tokens == 3000 and est.est.cache_read_tokens == 6000
        usd[batch] = est.est.usd
    assert usd[True] == pytest.approx(usd[False] / 2)
    # ... and the dry run says so, and why a run's spend is not exactly half
    text = dry_run_report("HEAD", _outcome("anthropic", batch=True), Filters())
    assert "estimated cost: $0.2500 at batch prices" in text
    assert ("--batch: all usage of each first call (cache writes and reads included) at "
            "the model's batch discount;") in text
    assert "repair round-trips are live calls at full price" in text
    assert "full price" not in text.split("repair")[0]  # never "cache ... at full price"


def test_unknown_filter_value_names_the_known_ones() -> None:
    check_filter("--criterion", None, {"a"})
    check_filter("--criterion", "a", {"a", "b"})
    with pytest.raises(AgentsError, match=r"unknown --criterion 'x'; known: a, b$"):
        check_filter("--criterion", "x", {"b", "a"})


def test_budget_stop_line_names_the_reservation() -> None:
    t = Tally(stopped_by="budget", reserved_usd=0.0312, in_flight=3)
    assert "$0.0312 was reserved for 3 call(s) in flight" in stop_line(t, 1.0)
    assert "would pass the budget ($1)" in stop_line(Tally(stopped_by="budget"), 1.0)


async def test_output_is_an_estimate_capped_at_max_tokens_and_the_dry_run_says_so() -> None:
    class Counting:
        model = "claude-sonnet-5-5"

        async def count_prefix_tokens(self, request: LLMRequest) -> int:
            return 1000

    request = LLMRequest(system=(SystemBlock("rules"),),
                         messages=({"role": "user", "content": "case"},))
    llm = LLMSettings(provider="anthropic", model="claude-sonnet-5-5", max_tokens=300)
    est = Estimator(Counting(), llm, 400, None)  # a guess above what one call can output
    await est.add(request)
    await est.add(request)
    assert est.est.output_tokens == 600  # 2 calls x max_tokens, not 2 x 400
    e = est.est
    e.output_source = "a fixed guess sized for a typical judge answer"
    text = dry_run_report("HEAD", Outcome("v", Plan("g"), estimate=e, provider="anthropic",
                                          model="claude-sonnet-5-5"), Filters())
    assert ("output tokens: 600, an estimate (300 per call: a fixed guess sized for a "
            "typical judge answer; billed as generated, at most max_tokens 300 per call)"
            ) in text

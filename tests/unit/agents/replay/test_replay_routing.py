"""A replay with ``llm.criterion_models``: every job priced at its routed model (Haiku 5.5 by
its prompt-length tier), the dry run's per-model lines, batch requests grouped by the
provider that builds their params, and a --batch run with jobs left unanswered is not a
silent success."""

from __future__ import annotations

import pytest

from agents.providers.base import LLMRequest, SystemBlock, TokenUsage
from agents.providers.factory import cost_usd
from agents.providers.settings import LLMSettings
from agents.replay.batch import _by_provider
from agents.replay.cli_llm import dry_run_report, result_report
from agents.replay.driver import Tally
from agents.replay.estimate import Estimate, Estimator, ModelCost, Pricing
from agents.replay.plan import Plan
from agents.replay.run import Outcome
from agents.replay.targets import Filters
from streams.exit_codes import ExitCode

SONNET, HAIKU = "claude-sonnet-5-5", "claude-haiku-5-5"


class PerChar:
    """count_tokens as one token per character of the user turn (the prefix: 2,500)."""

    name = "anthropic"

    def __init__(self, model: str) -> None:
        self.model, self.calls = model, 0

    async def count_prefix_tokens(self, request: LLMRequest) -> int:
        self.calls += 1
        return 2500 + sum(len(m["content"]) for m in request.messages)


def req(chars: int) -> LLMRequest:
    return LLMRequest(system=(SystemBlock("skill", cache=True),),
                      messages=({"role": "user", "content": "x" * chars},))


@pytest.mark.parametrize(("chars", "tier"), [(500, "<=100K tokens"),
                                             (150_000, ">100K tokens")])
async def test_each_job_is_priced_at_its_routed_model(chars: int, tier: str) -> None:
    llm = LLMSettings(provider="anthropic", model=SONNET)
    sonnet, haiku = PerChar(SONNET), PerChar(HAIKU)
    haiku_llm = llm.model_copy(update={"model": HAIKU})
    est = Estimator(sonnet, llm, 100, min_cache_tokens=2048)
    await est.add(req(500))  # the default model
    await est.add(req(chars), Pricing(haiku, haiku_llm, 2048))  # a routed criterion
    await est.add(req(chars), Pricing(haiku, haiku_llm, 2048))
    e = est.est
    # each model counts its own requests (and its cacheable prefix once)
    assert list(e.by_model) == [SONNET, HAIKU] and (sonnet.calls, haiku.calls) == (2, 3)
    assert (e.by_model[SONNET].calls, e.by_model[HAIKU].calls) == (1, 2)
    first = cost_usd(TokenUsage(500, 100, 0, 2500), SONNET, llm)
    write = cost_usd(TokenUsage(chars, 100, 0, 2500), HAIKU, haiku_llm)
    read = cost_usd(TokenUsage(chars, 100, 2500, 0), HAIKU, haiku_llm)
    assert e.by_model[SONNET].usd == pytest.approx(first)
    assert e.by_model[HAIKU].usd == pytest.approx(write + read), tier
    assert e.usd == pytest.approx(first + write + read)
    assert e.by_model[HAIKU].cache_write_tokens == 2500  # Haiku writes its own prefix
    # the old estimate priced every job at the default model
    assert e.by_model[HAIKU].usd < cost_usd(TokenUsage(chars, 100, 0, 2500), SONNET, llm)


def test_over_100k_tokens_haiku_pays_its_higher_tier() -> None:
    llm = LLMSettings(provider="anthropic", model=HAIKU)
    small = cost_usd(TokenUsage(100_000, 0), HAIKU, llm)
    large = cost_usd(TokenUsage(100_001, 0), HAIKU, llm)
    assert large / small == pytest.approx(5, rel=1e-3)


def test_dry_run_shows_a_line_per_model_when_criteria_are_routed() -> None:
    e = Estimate(jobs=4, calls=4, usd=0.0317, by_model={
        SONNET: ModelCost(calls=2, input_tokens=3000, output_tokens=800, usd=0.0300),
        HAIKU: ModelCost(calls=2, input_tokens=3000, output_tokens=800, usd=0.0017)})
    out = Outcome("judge-v3+abc+routes-1234", Plan("g"), estimate=e, provider="anthropic",
                  model=SONNET)
    text = dry_run_report("HEAD", out, Filters())
    assert f"model {SONNET}; routed by llm.criterion_models: {HAIKU}" in text
    assert f"    {SONNET}: 2 call(s), input 3000" in text and "$0.0300" in text
    assert f"    {HAIKU}: 2 call(s)" in text and "$0.0017" in text
    unrouted = Outcome("v", Plan("g"), estimate=Estimate(by_model={SONNET: ModelCost()}),
                       provider="anthropic", model=SONNET)
    assert "routed" not in dry_run_report("HEAD", unrouted, Filters())


def test_batch_requests_are_grouped_by_the_provider_that_builds_them() -> None:
    sonnet, haiku = PerChar(SONNET), PerChar(HAIKU)
    todo = [(sonnet, "a", req(1)), (haiku, "b", req(1)), (sonnet, "c", req(1))]
    groups = _by_provider(todo)
    assert [(p.model, [cid for cid, _ in items]) for p, items in groups] == [
        (SONNET, ["a", "c"]), (HAIKU, ["b"])]


@pytest.mark.parametrize(("tally", "code", "says"), [
    (Tally(judged=4), ExitCode.OK, "new results 4,"),
    (Tally(judged=3, deferred=1, stopped_by="unanswered"), ExitCode.FAILURE,
     "NOT DONE: 1 job(s) got no batch answer"),
    (Tally(judged=1, stopped_by="budget"), ExitCode.BUDGET_REACHED, "STOPPED"),
])
def test_a_run_that_left_jobs_undone_does_not_exit_0(tally: Tally, code: ExitCode,
                                                     says: str) -> None:
    text, got = result_report("HEAD", tally, 1.0)
    assert got == code and says in text

"""The cache-served share of the judge's input: the layout reaches the 60 % goal on the
sample with the default model's minimum, and the estimate counts only real breakpoints."""

from __future__ import annotations

import pytest

from agents.context.assemble import gather
from agents.context.charts import ChartStore
from agents.judge.prompt import DEFAULT_MIN_CACHE_TOKENS, build_request
from agents.providers.base import LLMRequest, SystemBlock
from agents.settings import Settings
from schemas.skill import load_skill
from tools.bench.cache_share import cache_share
from tools.bench.judge_phase import bench_jobs


def sample_requests(n: int, min_cache_tokens: int) -> list[LLMRequest]:
    s = Settings()
    skill, store = load_skill(s.skill_dir), ChartStore(s.charts_dir)
    out = []
    for job in bench_jobs(s, n, slow=False):
        crit, notes = skill.criteria[job.field_id], store.notes(job.patient_id)
        ctx = gather(job.answers, crit.keywords, notes, s.llm.context_budget_chars)
        out.append(build_request(skill, crit, job, ctx, structured=True, max_tokens=1000,
                                 notes=notes, min_cache_tokens=min_cache_tokens))
    return out


def test_the_sample_reaches_the_cache_goal_with_the_default_minimum() -> None:
    result = cache_share(sample_requests(120, DEFAULT_MIN_CACHE_TOKENS))
    assert result.share >= 0.60, result
    # the shared block is written once and then served: writes are a small part
    assert result.written < 0.05 * result.total


def test_a_prefix_below_the_minimum_is_never_counted_as_cached() -> None:
    assert cache_share(sample_requests(20, 10**6)).served == 0


def req(*blocks: tuple[str, bool], user: str = "u" * 35) -> LLMRequest:
    return LLMRequest(system=tuple(SystemBlock(t, c) for t, c in blocks),
                      messages=({"role": "user", "content": user},))


# served = the tools/output-schema head (3 tokens here) + the system blocks up to the hit
@pytest.mark.parametrize(("requests", "served"), [
    ([req(("a" * 350, True)), req(("a" * 350, True))], 103),      # second call hits
    ([req(("a" * 350, False)), req(("a" * 350, False))], 0),      # no breakpoint, no hit
    ([req(("a" * 350, True), ("b" * 35, True)),                   # shared block hits even
      req(("a" * 350, True), ("c" * 35, True))], 103),           # when block 2 differs
    ([req(("a" * 350, True), ("b" * 35, True)),
      req(("a" * 350, True), ("b" * 35, True))], 113),           # both blocks hit
])
def test_the_longest_already_sent_prefix_is_served(requests: list[LLMRequest],
                                                    served: int) -> None:
    assert cache_share(requests).served == served

"""`replay judge` survives a SIGKILL without paying for a job twice (requests counted at the
fake), and an outage during a replay leaves no fallback and no dead letter: the replay pauses
(circuit breaker) and completes once the model answers again."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from agents.providers.anthropic import AnthropicProvider
from agents.replay.run import Options, replay
from streams.topics import ensure_topics
from tests.helpers import collect, produce, values
from tests.integration.test_judge_worker import GOOD, judge_settings, record
from tests.unit.agents.judge.fixtures import disagreement
from tools.fakes.fake_anthropic import FakeAnthropic, Reply
from tools.subproc import WorkerProcess

pytestmark = pytest.mark.integration
REPLAY = ("cli.main", "replay", "judge")


async def test_sigkill_mid_replay_then_rerun_pays_no_job_twice(bootstrap: str,
                                                               tmp_path: Path) -> None:
    # offsets are committed rarely, so results published before the kill are redelivered
    s = judge_settings(bootstrap, tmp_path, kafka={"commit_interval_seconds": 60.0})
    await ensure_topics(s)
    jobs = [disagreement(job_id=f"job-k{i:02d}") for i in range(16)]
    await produce(bootstrap, s.topics.judge_jobs, [record(j) for j in jobs])
    topic = s.topics.judge_results
    with FakeAnthropic(latency=0.3,
                       responder=lambda body: Reply.message(text=json.dumps(GOOD))) as fake:
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test"}
        first = WorkerProcess("replay", s, tmp_path / "replay-1.log", env, REPLAY)
        try:
            await collect(bootstrap, topic, until=4, timeout=60, quiet=0)
        finally:
            first.kill()
        published = {r["job_id"] for r in values(await collect(bootstrap, topic, timeout=3))}
        assert 4 <= len(published) < len(jobs), first.log_path.read_text()[-2000:]
        paid_before = len(fake.message_requests())
        second = WorkerProcess("replay", s, tmp_path / "replay-2.log", env, REPLAY)
        try:
            assert second.proc.wait(timeout=120) == 0, second.log_path.read_text()[-2000:]
        finally:
            second.kill()
        paid_after = len(fake.message_requests()) - paid_before
        log = (tmp_path / "replay-2.log").read_text()
    results = values(await collect(bootstrap, topic, until=len(jobs), timeout=30, quiet=1))
    assert Counter(r["job_id"] for r in results) == Counter(j.job_id for j in jobs)
    assert paid_after == len(jobs) - len(published), log  # published ones not paid again
    assert f"already published {len(published)}" in log and "resumed" in log


async def test_an_outage_pauses_the_replay_which_then_completes_without_dead_letters(
        bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    s = judge_settings(bootstrap, tmp_path, llm={"breaker_backoff_seconds": 0.2,
                                                 "breaker_backoff_max_seconds": 0.5})
    await ensure_topics(s)
    jobs = [disagreement(job_id=f"job-o{i}") for i in range(4)]
    await produce(bootstrap, s.topics.judge_jobs, [record(j) for j in jobs])
    refused = []

    def respond(body: object) -> Reply:
        if len(refused) < 12:  # the model is down for the first dozen requests
            refused.append(1)
            return Reply.error(529)
        return Reply.message(text=json.dumps(GOOD))

    with FakeAnthropic(responder=respond) as fake:
        fake.default_retry_after = None  # our own (short) backoff
        provider = lambda: AnthropicProvider(s.llm, base_url=fake.base_url)  # noqa: E731
        run = await replay(s, Options("judge"), provider=provider())
    assert run.tally is not None and (run.tally.failed, run.tally.judged) == (0, 4)
    assert len(refused) == 12
    dlq = s.topics.dlq(s.topics.judge_jobs)
    assert not await collect(bootstrap, dlq, timeout=1, quiet=0)
    results = values(await collect(bootstrap, s.topics.judge_results, until=4, timeout=10,
                                   quiet=0.5))
    assert sorted(r["job_id"] for r in results) == sorted(j.job_id for j in jobs)
    assert {r["status"] for r in results} == {"ok"}


async def test_budget_stops_cleanly_and_a_rerun_finishes_without_paying_twice(
        bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    s = judge_settings(bootstrap, tmp_path, llm={"concurrency": 1})
    await ensure_topics(s)
    jobs = [disagreement(job_id=f"job-b{i}") for i in range(6)]
    await produce(bootstrap, s.topics.judge_jobs, [record(j) for j in jobs])
    with FakeAnthropic(responder=lambda body: Reply.message(text=json.dumps(GOOD))) as fake:
        provider = lambda: AnthropicProvider(s.llm, base_url=fake.base_url)  # noqa: E731
        dry = await replay(s, Options("judge", dry_run=True), provider=provider())
        assert dry.estimate is not None and dry.estimate.calls == 6
        budget = dry.estimate.usd_per_call * 2.5  # room for two calls, not three
        capped = await replay(s, Options("judge", budget_usd=budget), provider=provider())
        t = capped.tally
        assert t is not None and t.stopped_by == "budget" and 2 <= t.judged < 6
        # stopped because one more (estimated) call would have passed the budget
        assert t.usd <= budget < t.usd + dry.estimate.usd_per_call
        assert len(fake.message_requests()) == t.judged
        rest = await replay(s, Options("judge"), provider=provider())
        assert rest.tally is not None and rest.tally.judged == 6 - t.judged
        assert len(fake.message_requests()) == 6  # the budgeted run's jobs not paid again
    results = values(await collect(bootstrap, s.topics.judge_results, until=6, timeout=10,
                                   quiet=0.5))
    assert Counter(r["job_id"] for r in results) == Counter(j.job_id for j in jobs)

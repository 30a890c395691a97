"""`replay judge --batch` end to end against the fake batches API: killed between submit and
collect, the rerun collects the recorded batch instead of paying again; an expired entry is
re-queued into a second batch; results are validated like live ones and priced at the
batch discount; no live Messages call is made."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from agents.judge.versioning import prompt_version, result_id
from agents.providers import batch_limits
from agents.providers.anthropic import AnthropicProvider
from agents.providers.base import TokenUsage
from agents.providers.factory import cost_usd
from agents.replay.run import Options, replay
from schemas.skill import load_skill
from streams.topics import ensure_topics
from tests.helpers import collect, produce, values
from tests.integration.test_cli import run_cli
from tests.integration.test_judge_worker import GOOD, judge_settings, record
from tests.integration.test_replay_judge import jobs
from tests.unit.agents.judge.fixtures import TASK, disagreement
from tests.unit.streams import probe_cases as probe
from tools.fakes.fake_anthropic import FakeAnthropic, Reply
from tools.subproc import WorkerProcess

pytestmark = pytest.mark.integration
BATCH = ("cli.main", "replay", "judge", "--batch", "--poll-seconds", "0.05")


async def test_batch_replay_survives_a_kill_between_submit_and_collect(
        bootstrap: str, tmp_path: Path) -> None:
    s = judge_settings(bootstrap, tmp_path)
    await ensure_topics(s, [s.topics.replay_batches])
    js = jobs(5)
    await produce(bootstrap, s.topics.judge_jobs, [record(j) for j in js])
    version = prompt_version(s, load_skill(s.skill_dir), "anthropic", s.llm.model)
    expired = result_id(js[0].job_id, version)
    with FakeAnthropic(responder=lambda body: Reply.message(text=json.dumps(GOOD))) as fake:
        fake.batches.hold = True  # submitted, never ends while the first run lives
        fake.batches.outcomes = {expired: ["expired"]}
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test"}
        first = WorkerProcess("replay", s, tmp_path / "batch-1.log", env, BATCH)
        try:
            noted = await collect(bootstrap, s.topics.replay_batches, until=1, timeout=60,
                                  quiet=0.5)
        finally:
            first.kill()
        assert len(noted) == 1, (tmp_path / "batch-1.log").read_text()[-2000:]
        assert not await collect(bootstrap, s.topics.judge_results, timeout=1, quiet=0)
        fake.batches.hold = False
        second = WorkerProcess("replay", s, tmp_path / "batch-2.log", env, BATCH)
        try:
            assert second.proc.wait(timeout=120) == 0, \
                (tmp_path / "batch-2.log").read_text()[-2000:]
        finally:
            second.kill()
        batches, submitted = len(fake.batches.batches), Counter(fake.batches.submitted)
        succeeded, live = Counter(fake.batches.succeeded), fake.message_requests()
    assert batches == 2  # the recorded one, collected; then one for the expired entry
    assert submitted[expired] == 2 and all(n == 1 for c, n in submitted.items() if c != expired)
    assert set(succeeded.values()) == {1} and len(succeeded) == 5  # nobody paid twice
    assert not live
    results = values(await collect(bootstrap, s.topics.judge_results, until=6, timeout=20,
                                   quiet=1))
    assert Counter(r["job_id"] for r in results) == Counter(j.job_id for j in js)
    for r in (r for r in results if r["kind"] != "type_drift"):
        assert r["status"] == "ok" and r["prompt_version"] == version
        u = r["usage"]
        usage = TokenUsage(u["input_tokens"], u["output_tokens"],
                           u["cache_read_input_tokens"], u["cache_creation_input_tokens"])
        assert u["cost_usd"] == pytest.approx(cost_usd(usage, r["model"], s.llm, batch=True))
        assert u["cost_usd"] < cost_usd(usage, r["model"], s.llm)


async def test_cli_dry_run_prices_live_and_batch_and_sends_nothing(
        bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = judge_settings(bootstrap, tmp_path)
    await ensure_topics(s)
    await produce(bootstrap, s.topics.judge_jobs, [record(j) for j in jobs(3)])
    with FakeAnthropic() as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        live = run_cli(s, "replay", "judge", "--dry-run")
        batch = run_cli(s, "replay", "judge", "--dry-run", "--batch")
        counted = [r for r in fake.requests if r.path.endswith("/count_tokens")]
        assert not fake.message_requests() and not fake.batches.batches and counted
    assert live.returncode == 0 and batch.returncode == 0, live.stderr + batch.stderr
    assert "to judge: 4 job(s), 3 model call(s)" in live.stdout, live.stdout
    assert ("per call: a fixed guess sized for a typical judge answer; billed as generated, "
            "at most max_tokens") in live.stdout

    def usd(out: str) -> float:
        return float(out.split("estimated cost: $")[1].split()[0])

    assert 0 < usd(batch.stdout) < usd(live.stdout)
    assert "judge-v3+" in live.stdout and "Traceback" not in live.stderr


async def test_a_recorded_batch_past_the_results_window_is_run_again(
        bootstrap: str, tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    s = judge_settings(bootstrap, tmp_path)
    await ensure_topics(s, [s.topics.replay_batches])
    js = jobs(3)
    await produce(bootstrap, s.topics.judge_jobs, [record(j) for j in js])
    with FakeAnthropic(responder=lambda body: Reply.message(text=json.dumps(GOOD))) as fake:
        fake.batches.hold = True
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test"}
        first = WorkerProcess("replay", s, tmp_path / "window-1.log", env, BATCH)
        try:
            noted = await collect(bootstrap, s.topics.replay_batches, until=1, timeout=60,
                                  quiet=0.5)
        finally:
            first.kill()
        assert len(noted) == 1, (tmp_path / "window-1.log").read_text()[-2000:]
        later = datetime.now(UTC) + timedelta(days=30)  # expired, then archived
        fake.batches.now = lambda: later
        fake.batches.hold = False
        second = WorkerProcess("replay", s, tmp_path / "window-2.log", env, BATCH)
        try:
            assert second.proc.wait(timeout=120) == 0, \
                (tmp_path / "window-2.log").read_text()[-2000:]
        finally:
            second.kill()
        log = (tmp_path / "window-2.log").read_text()
        batches, succeeded = len(fake.batches.batches), Counter(fake.batches.succeeded)
    assert "past the 29-day results window" in log
    assert batches == 2 and len(succeeded) == 3 and set(succeeded.values()) == {1}
    results = values(await collect(bootstrap, s.topics.judge_results, until=len(js),
                                   timeout=20, quiet=1))
    assert Counter(r["job_id"] for r in results) == Counter(j.job_id for j in js)


async def test_a_replay_over_the_byte_limit_is_split_into_batches_the_fake_accepts(
        bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the 256 MB limit lowered to 64 KiB for the client's chunker and the fake alike (one
    # seam): a replay of more jobs than fit goes in several batches, each accepted
    monkeypatch.setattr(batch_limits, "MAX_BYTES", 64 * 1024)
    s = judge_settings(bootstrap, tmp_path)
    await ensure_topics(s, [s.topics.replay_batches])
    js = jobs(16)
    await produce(bootstrap, s.topics.judge_jobs, [record(j) for j in js])
    with FakeAnthropic(responder=lambda body: Reply.message(text=json.dumps(GOOD))) as fake:
        out = await replay(s, Options("judge", batch=True, poll_seconds=0.05),
                           provider=AnthropicProvider(s.llm, base_url=fake.base_url,
                                                      api_key="test"))
        creates = [r for r in fake.requests if r.path == "/v1/messages/batches"]
        live = fake.message_requests()
    sizes = [len(json.dumps(r.body, ensure_ascii=False, separators=(",", ":")).encode())
             for r in creates]
    assert len(creates) >= 2 and all(r.status == 200 for r in creates), sizes
    assert max(sizes) <= 64 * 1024 < sum(sizes)
    # 16 disagreements answered by batches, the type drift decided in code (no call)
    assert out.tally is not None and out.tally.judged == 17, out.tally
    assert Counter(fake.batches.succeeded) == Counter(
        c for r in creates for c in (q["custom_id"] for q in r.body["requests"]))
    assert len(fake.batches.succeeded) == 16 and not live


async def test_batch_submits_no_job_the_worker_would_refuse(bootstrap: str,
                                                            tmp_path: Path) -> None:
    """The batch path builds first requests before the handler runs: a job of a task not
    judged here or of an unknown criterion must not reach the Batches API (nor be judged)."""
    s = judge_settings(bootstrap, tmp_path, tasks=(TASK,))
    await ensure_topics(s, [s.topics.replay_batches])
    good = disagreement(job_id="job-batch-good")
    refused = [probe.other_task_job(), probe.unknown_criterion_job()]
    await produce(bootstrap, s.topics.judge_jobs,
                  [record(good)] + [(b"k", probe.dumps(j)) for j in refused])
    version = prompt_version(s, load_skill(s.skill_dir), "anthropic", s.llm.model)
    with FakeAnthropic(responder=lambda body: Reply.message(text=json.dumps(GOOD))) as fake:
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test"}
        proc = WorkerProcess("replay", s, tmp_path / "refused.log", env, BATCH)
        try:
            assert proc.proc.wait(timeout=120) == 0, \
                (tmp_path / "refused.log").read_text()[-2000:]
        finally:
            proc.kill()
        submitted = Counter(fake.batches.submitted)
    assert submitted == {result_id(good.job_id, version): 1}, submitted
    results = values(await collect(bootstrap, s.topics.judge_results, until=1, timeout=20,
                                   quiet=1))
    assert [r["job_id"] for r in results] == [good.job_id]

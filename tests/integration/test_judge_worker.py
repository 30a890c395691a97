"""The judge worker against a real broker and the fake Anthropic server: every
job yields exactly one result (ok or fallback) while bad records and a job the model keeps
refusing while it answers the others (replayable, ``llm_unavailable``) go to the DLQ and the
worker keeps going; after a SIGKILL mid-batch and a restart, still one result per job, and
published results are not paid for again."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agents.judge.run import serve
from agents.providers.anthropic import AnthropicProvider
from agents.settings import Settings
from schemas.chart_review import JudgeJob
from streams.topics import ensure_topics
from tests.helpers import collect, produce, values, worker
from tests.helpers import test_settings as make_settings
from tests.unit.agents.judge.fixtures import (
    PATIENT,
    answer,
    disagreement,
    job,
    write_charts,
    write_skill,
)
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

pytestmark = pytest.mark.integration

LLM = {"provider": "anthropic", "model": "claude-sonnet-5-5", "sdk_max_retries": 0,
       "deadline_seconds": 10.0, "backoff_base_seconds": 0.05, "requests_per_minute": 6000,
       "concurrency": 4, "max_attempts": 3}
GOOD = {"suggested_answer": True, "reasoning": "The problem list documents it.",
        "evidence_pointers": [{"note_id": "n01", "what_to_look_for": "problem list",
                               "offsets": None}],
        "agent_correctness": "agent_a", "classification_hint": "agent_b_error",
        "judge_confidence": "high"}


def judge_settings(bootstrap: str, tmp_path: Path, **over: Any) -> Settings:
    (tmp_path / "data").mkdir(exist_ok=True)
    return make_settings(bootstrap, llm={**LLM, **over.pop("llm", {})},
                         skill_dir=write_skill(tmp_path / "data"),
                         charts_dir=write_charts(tmp_path / "data"), **over)


def record(j: JudgeJob) -> tuple[bytes, bytes]:
    return j.key.encode(), j.model_dump_json().encode()


def by_scenario(body: dict[str, Any]) -> Reply:
    """Answers chosen by what the case message says (cells are told apart by job)."""
    text = json.dumps(body.get("messages", []))
    if "refuse-me" in text:
        return Reply.message(text="", stop_reason="refusal")
    if "overload-me" in text:
        return Reply.error(529, retry_after=0.01)
    if "garble-me" in text:
        return Reply.message(text='{"verdict": "yes"}')
    return Reply.message(text=json.dumps(GOOD))


def scenario(tag: str, n: int = 0) -> JudgeJob:
    base = disagreement(job_id=f"job-{tag}-{n}")
    first = base.answers[0].model_copy(update={"rationale": tag})
    return base.model_copy(update={"answers": (first, *base.answers[1:])})


async def test_every_job_gets_one_result_and_the_worker_keeps_going(
        bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    caplog.set_level(logging.WARNING, logger="agents.judge.run")
    # a short breaker backoff: the overloaded job fails on its own (the others are answered
    # meanwhile) three times, then goes to the DLQ; an outage would dead-letter nothing. Alone
    # it cannot be told from an outage, so more jobs keep arriving (and are answered) after
    # the first ones are done: each a fresh probe ahead of the overloaded one
    settings = judge_settings(bootstrap, tmp_path, llm={"breaker_backoff_seconds": 0.2})
    await ensure_topics(settings)
    drift = job("type_drift", answer("default", True), answer("skeptical", "yes"),
                job_id="job-drift")
    jobs = [scenario("ok"), scenario("refuse-me"), scenario("overload-me"),
            scenario("garble-me"), drift, disagreement(patient="p404", job_id="job-nonotes"),
            scenario("ok", 2)]
    more = [scenario("more", n) for n in range(40)]
    records = [record(jobs[0]), (b"junk", b"{not json"), *map(record, jobs[1:])]
    await produce(bootstrap, settings.topics.judge_jobs, records)
    stop = asyncio.Event()
    with FakeAnthropic(responder=by_scenario, latency=0.2) as fake:
        provider = AnthropicProvider(settings.llm, base_url=fake.base_url)
        task = asyncio.create_task(serve(settings, provider, stop=stop))
        try:
            await collect(bootstrap, settings.topics.judge_results, until=len(jobs) - 1,
                          timeout=60, quiet=0)
            await produce(bootstrap, settings.topics.judge_jobs, [record(j) for j in more])
            dead = await collect(bootstrap, settings.topics.dlq(settings.topics.judge_jobs),
                                 until=2, timeout=60, quiet=0.2)
            results = values(await collect(bootstrap, settings.topics.judge_results,
                                           until=len(jobs) - 1 + len(more), timeout=60,
                                           quiet=1.0))
        finally:
            stop.set()
            await asyncio.wait_for(task, 30)
        assert not any("p404" in json.dumps(r.body) for r in fake.message_requests())
    status = {r["job_id"]: r["status"] for r in results}
    assert Counter(r["job_id"] for r in results) == Counter(
        j.job_id for j in [*jobs, *more] if j.job_id != "job-overload-me-0")
    assert status == {"job-ok-0": "ok", "job-refuse-me-0": "fallback",
                      "job-garble-me-0": "fallback",
                      "job-drift": "ok", "job-nonotes": "fallback", "job-ok-2": "ok",
                      **{j.job_id: "ok" for j in more}}
    # no JUDGEFLOW_TASKS: every task is paid for, and the worker said so once
    assert [r.levelname for r in caplog.records
            if "JUDGEFLOW_TASKS is empty" in r.getMessage()] == ["WARNING"]
    drift_result = next(r for r in results if r["job_id"] == "job-drift")
    assert drift_result["usage"]["llm_calls"] == 0
    kinds = {dict(d.headers)["error.type"]: d.value for d in dead}
    assert len(dead) == 2 and kinds[b"invalid_json"] == b"{not json"
    # the overloaded job is not a result: its original bytes wait in the DLQ for a replay
    assert kinds[b"llm_unavailable"] == record(jobs[2])[1]
    for r in results:  # the fallback record of the contract
        if r["status"] == "fallback":
            assert r["analysis"]["reasoning"].startswith("judge could not analyze this cell: ")
            assert r["analysis"]["suggested_answer"] is None


# Also on the embedded broker: its SIGKILLed members never expire (streams/member_eviction.py).
@pytest.mark.brokers("embedded", "apache")
async def test_sigkill_mid_batch_then_restart_leaves_one_result_per_job(
        bootstrap: str, tmp_path: Path) -> None:
    # offsets are committed rarely, so every result published before the kill is redelivered
    settings = judge_settings(bootstrap, tmp_path, kafka={"commit_interval_seconds": 60.0})
    await ensure_topics(settings)
    jobs = [disagreement(job_id=f"job-kill-{i:02d}") for i in range(24)]
    await produce(bootstrap, settings.topics.judge_jobs, [record(j) for j in jobs])
    topic = settings.topics.judge_results
    # the first worker gets 8 answers, then none before its kill: the kill lands mid-batch
    # however slow the machine (at 0.25 s each, a loaded CI once had all 24 out before it)
    first_calls = {"n": 0, "holding": True}

    def respond(body: dict[str, object]) -> Reply:
        first_calls["n"] += 1
        hold = first_calls["holding"] and first_calls["n"] > 8
        return Reply.message(text=json.dumps(GOOD), delay=30.0 if hold else 0.0)

    with FakeAnthropic(latency=0.25, responder=respond) as fake:
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test"}
        with worker("judge", settings, tmp_path, tag="-1", extra_env=env) as first:
            before = await collect(bootstrap, topic, until=6, timeout=60, quiet=0)
            first.kill()
        first_calls["holding"] = False
        published = {r["job_id"] for r in values(await collect(bootstrap, topic, timeout=3))}
        assert 6 <= len(published) < len(jobs), first.log_text()
        paid_before = len(fake.message_requests())
        with worker("judge", settings, tmp_path, tag="-2", extra_env=env) as second:
            results = values(await collect(bootstrap, topic, until=len(jobs), timeout=90,
                                           quiet=2.0))
            log = second.log_text()
        paid_after = len(fake.message_requests()) - paid_before
    counts = Counter(r["job_id"] for r in results)
    assert counts == Counter(j.job_id for j in jobs), log  # exactly one each
    assert len({r["result_id"] for r in results}) == len(jobs)
    # every redelivered job with a published result was skipped, not paid for again
    assert log.count("already judged") == len(published)
    # answers the first worker paid for but had not published are reused from the journal
    # (how many depends on where the kill fell; an entry may also be of a job published just
    # before its tombstone): no published job is paid again, no journaled one either
    found = re.search(r"llm journal: (\d+) input\(s\) with paid answers", log)
    kept = int(found.group(1)) if found else 0
    unpublished = len(jobs) - len(published)
    assert unpublished - kept <= paid_after <= unpublished, log
    assert before
    assert PATIENT in {r["patient_id"] for r in results}

"""`replay judge` on the real broker against the fake Anthropic API: jobs judged under
version A, the prompt changed (another max_tokens: a new version), replayed under B. Both
series exist with distinct ids and series headers, B names what it supersedes, type drift
(settled in code) is not re-emitted, `compare` reports both against adjudications, the
dry-run estimate is within 20% of the spend, and a second run pays for nothing."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from agents.judge.run import serve
from agents.providers.anthropic import AnthropicProvider
from agents.replay.run import Options, replay
from agents.settings import Settings
from schemas.chart_review import JudgeJob
from streams.topics import ensure_topics
from tests.helpers import collect, label_of, produce, values
from tests.integration.test_cli import run_cli
from tests.integration.test_judge_worker import GOOD, judge_settings, record
from tests.unit.agents.judge.fixtures import PATIENT, answer, disagreement, job
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

pytestmark = pytest.mark.integration

B_MAX_TOKENS = 8000  # version B differs from A only here: a parameter that shapes answers
ALT = {**GOOD, "suggested_answer": False, "agent_correctness": "agent_b",
       "classification_hint": "agent_a_error", "reasoning": "The notes deny a diagnosis.",
       "evidence_pointers": [{"note_id": "n02", "what_to_look_for": "history",
                              "offsets": None}]}


@pytest.fixture()
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as f:
        yield f


def by_version(body: dict[str, Any]) -> Reply:
    return Reply.message(text=json.dumps(ALT if body.get("max_tokens") == B_MAX_TOKENS
                                         else GOOD))


def jobs(n: int) -> list[JudgeJob]:
    out = []
    for i in range(n):  # one task per job: distinct cells on the patient that has charts
        base = disagreement(job_id=f"job-r{i}")
        out.append(base.model_copy(update={"task_id": f"T{i}", "answers": tuple(
            x.model_copy(update={"task_id": f"T{i}"}) for x in base.answers)}))
    out.append(job("type_drift", answer("default", True), answer("skeptical", "yes"),
                   job_id="job-drift"))
    return out


def version_b(s: Settings) -> Settings:
    return s.model_copy(update={"llm": s.llm.model_copy(update={"max_tokens": B_MAX_TOKENS})})


async def judge_under_a(s: Settings, fake: Any, n: int) -> list[dict[str, Any]]:
    stop = asyncio.Event()
    task = asyncio.create_task(serve(s, AnthropicProvider(s.llm, base_url=fake.base_url),
                                     stop=stop))
    try:
        return values(await collect(s.kafka.bootstrap_servers, s.topics.judge_results,
                                    until=n, timeout=60, quiet=0.5))
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


async def adjudicate(s: Settings, cells: list[JudgeJob]) -> None:
    now = datetime(2026, 1, 1, tzinfo=UTC).isoformat()
    adjs = [(f"{j.task_id}|{PATIENT}|t2dm_dx".encode(), orjson.dumps({
        "task_id": j.task_id, "patient_id": PATIENT, "field_id": "t2dm_dx",
        "final_answer": True, "classification": "agent_b_error", "adjudicator": "rev-1",
        "adjudicated_at": now})) for j in cells]
    await produce(s.kafka.bootstrap_servers, s.topics.adjudications, adjs)


async def test_replay_publishes_a_second_series_and_compare_reports_both(
        bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: Any) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    a = judge_settings(bootstrap, tmp_path)
    await ensure_topics(a)
    js = jobs(6)
    await produce(bootstrap, a.topics.judge_jobs, [record(j) for j in js])
    fake.responder = by_version
    first = await judge_under_a(a, fake, len(js))
    assert len(first) == len(js)
    paid_a = len(fake.message_requests())

    b = version_b(a)
    provider = lambda: AnthropicProvider(b.llm, base_url=fake.base_url)  # noqa: E731
    dry = await replay(b, Options("judge", dry_run=True), provider=provider())
    assert dry.estimate is not None and dry.tally is None
    assert (dry.estimate.jobs, dry.estimate.calls) == (6, 6)  # type drift: same version
    assert len(fake.message_requests()) == paid_a  # a dry run pays for nothing

    out = await replay(b, Options("judge"), provider=provider())
    t = out.tally
    assert t is not None and (t.judged, t.already, t.total) == (6, 1, 7)
    assert len(fake.message_requests()) - paid_a == 6
    est = dry.estimate.usd
    assert t.usd > 0 and abs(est - t.usd) / t.usd <= 0.20, (est, t.usd)
    print(f"estimate {est:.6f} USD, spent {t.usd:.6f} USD")

    records = await collect(bootstrap, a.topics.judge_results, until=13, timeout=30, quiet=1)
    res = values(records)
    old = next(r["prompt_version"] for r in first if r["kind"] != "type_drift")
    versions = {r["prompt_version"] for r in res if r["kind"] != "type_drift"}
    assert versions == {old, out.version} and old != out.version
    assert label_of(old) == label_of(out.version) == "judge-v3"
    assert len({r["result_id"] for r in res}) == len(res) == 13
    a_ids = {r["job_id"]: r["result_id"] for r in res if r["prompt_version"] != out.version}
    for rec, r in zip(records, res, strict=True):
        h = {k: v.decode() for k, v in rec.headers}
        assert (h["result_id"], h["prompt_version"], h["job_id"]) == (
            r["result_id"], r["prompt_version"], r["job_id"])
        if r["prompt_version"] == out.version:
            assert r["supersedes"] == h["supersedes"] == a_ids[r["job_id"]]
            assert r["analysis"]["suggested_answer"] is False
        else:
            assert r["supersedes"] is None and "supersedes" not in h

    again = await replay(b, Options("judge"), provider=provider())
    assert again.tally is not None and again.tally.total == 0 and again.plan.resumed
    assert len(fake.message_requests()) - paid_a == 6  # nothing paid twice

    await adjudicate(a, js[:-1])
    cmp = run_cli(a, "compare", old, out.version, "--json")
    assert cmp.returncode == 0, cmp.stderr
    rows = orjson.loads(cmp.stdout)["criteria"]
    assert len(rows) == 6
    for row in rows:  # A said True (the reviewer's answer), B False: by hand 1/1 vs 0/1
        assert (row["old"]["answer_accuracy"]["hits"], row["old"]["answer_accuracy"]["n"]) \
            == (1, 1)
        assert (row["new"]["answer_accuracy"]["hits"], row["new"]["answer_accuracy"]["n"]) \
            == (0, 1)
        assert row["changed_suggestions"]["hits"] == 1

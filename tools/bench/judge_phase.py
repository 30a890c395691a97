"""One phase of the judge benchmark: sample jobs, the fake Messages API in its own process,
the real judge worker against it, and what came out (shared by the latency phases in
:mod:`tools.bench.judge` and the tier phase in :mod:`tools.bench.judge_tier`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from agents.context.charts import ChartStore
from agents.judge.run import serve
from agents.judge.sample_request import ANSWERS, answer_pairs, disagreement, judge_request
from agents.providers.base import LLMRequest
from agents.providers.factory import make_provider
from agents.providers.limits import Budget
from agents.settings import Settings
from schemas.chart_review import JudgeJob
from schemas.skill import load_skill
from streams import kafka_clients
from streams.settings import TopicSettings
from tools.bench.judge_fake import SLOW_MARK

log = logging.getLogger(__name__)
REPO = Path(__file__).resolve().parents[2]


def bench_jobs(settings: Settings, n: int, slow: bool) -> list[JudgeJob]:
    """``n`` disagreement jobs built from the sample answers, cycling through their cells."""
    pairs = answer_pairs(Path(settings.skill_dir).parent / ANSWERS)
    jobs = []
    for i in range(n):
        a, b = pairs[i % len(pairs)]
        if slow and i == 0:
            a = a.model_copy(update={"rationale": SLOW_MARK})
        jobs.append(disagreement(a, b, reason="benchmark"))
    return jobs


@dataclass
class FakeProc:
    url: str
    #: the fake's tier statistics, read when it exits
    stats: dict[str, Any] = field(default_factory=dict)


@contextlib.contextmanager
def fake_server(latency: float, slow: float, extra: list[str] | None = None
                ) -> Iterator[FakeProc]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tools.bench.judge_fake", "--latency", str(latency),
         "--slow", str(slow), *(extra or [])], cwd=REPO, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdin is not None
    url = proc.stdout.readline().strip()
    fake = FakeProc(url)
    try:
        if not url.startswith("http"):
            raise SystemExit("judgeflow bench judge: the fake server did not start (it needs "
                             "tools/fakes: run from a source checkout)")
        yield fake
    finally:
        try:
            out, _ = proc.communicate(timeout=10)  # closes stdin: the fake stops
            fake.stats = orjson.loads(out.strip().splitlines()[-1]) if out.strip() else {}
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass
class Phase:
    results: list[dict[str, Any]]
    #: jobs dead-lettered (llm_unavailable after our retries) instead of judged
    dead_lettered: int = 0

    def span(self, results: list[dict[str, Any]] | None = None) -> tuple[float, float]:
        rows = self.results if results is None else results
        ends = [datetime.fromisoformat(r["judged_at"]).timestamp() for r in rows]
        starts = [e - r["latency_ms"] / 1000 for e, r in zip(ends, rows, strict=True)]
        return min(starts), max(ends)


async def run_phase(settings: Settings, url: str, jobs: list[JudgeJob], timeout: float,
                 minute_seconds: float = 60.0, blind: bool = False) -> Phase:
    """Judge ``jobs`` with a fresh worker. ``blind``: the pacer ignores rate-limit headers
    (the baseline: only the concurrency cap and retry-after after a 429)."""
    from streams.topics import ensure_topics

    tag = uuid.uuid4().hex[:8]
    topics = {k: f"bench{tag}.{v}" for k, v in TopicSettings().model_dump().items()}
    s = settings.model_copy(update={
        "topics": TopicSettings(**topics),
        "groups": settings.groups.model_copy(update={"judge": f"bench{tag}-judge"})})
    bs = s.kafka
    await ensure_topics(s)
    producer = kafka_clients.producer(bs, acks="all", linger_ms=5)
    await producer.start()
    try:
        sent = [await producer.send(s.topics.judge_jobs, key=j.key.encode(),
                                    value=j.model_dump_json().encode()) for j in jobs]
        await asyncio.gather(*sent)
    finally:
        await producer.stop()
    stop = asyncio.Event()
    provider = make_provider(s, base_url=url, api_key="bench")
    budget = getattr(provider, "budget", None)
    if budget is not None:  # the pacer's minute is the fake's (see bench_tier)
        fresh = Budget.create(budget.policy, requests_per_minute=s.llm.requests_per_minute,
                              concurrency=s.llm.concurrency, minute_seconds=minute_seconds)
        if blind:
            fresh.pacer.observe = lambda headers: False  # type: ignore[method-assign]
        provider.budget = fresh  # type: ignore[attr-defined]
    task = asyncio.create_task(serve(s, provider, stop=stop))
    dlq = s.topics.dlq(s.topics.judge_jobs)
    try:
        got = await _read(bs, [s.topics.judge_results, dlq], len(jobs), timeout)
    finally:
        stop.set()
        await asyncio.wait_for(task, 60)
    results = [v for t, v in got if t != dlq]
    if len(got) < len(jobs) or (len(results) < len(jobs) and not blind):
        raise SystemExit(f"judgeflow bench judge: only {len(results)}/{len(jobs)} results")
    return Phase(results, len(got) - len(results))


async def _read(kafka: kafka_clients.KafkaTarget, topics: list[str], n: int, timeout: float
                ) -> list[tuple[str, dict[str, Any]]]:
    """The first ``n`` records of ``topics`` (from the beginning) as ``(topic, value)``,
    or fewer at ``timeout``."""
    consumer = kafka_clients.consumer(kafka, *topics, enable_auto_commit=False,
                                      auto_offset_reset="earliest")
    await consumer.start()
    out: list[tuple[str, dict[str, Any]]] = []
    try:
        async with asyncio.timeout(timeout):
            while len(out) < n:
                batch = await consumer.getmany(timeout_ms=200)
                out += [(r.topic, orjson.loads(r.value)) for recs in batch.values()
                        for r in recs]
    except TimeoutError:
        pass
    finally:
        await consumer.stop()
    return out


def judge_requests(settings: Settings, jobs: list[JudgeJob]) -> list[LLMRequest]:
    """The requests the worker sends for ``jobs`` (built the same way, without sending)."""
    skill, store = load_skill(settings.skill_dir), ChartStore(settings.charts_dir)
    return [judge_request(settings, skill, store, job) for job in jobs]


def cache_served_share(usages: list[dict[str, Any]]) -> float:
    """Cache reads over all input tokens (uncached input + cache writes + cache reads)."""
    read = sum(u.get("cache_read_input_tokens", 0) for u in usages)
    total = read + sum(u.get("input_tokens", 0) + u.get("cache_creation_input_tokens", 0)
                       for u in usages)
    return read / total if total else 0.0

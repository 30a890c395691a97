"""``judgeflow bench judge``: judge-worker throughput against the fake Messages API.

Runs the real worker (broker, ConcurrentWorker, Anthropic SDK, validation) against the local
fake server (its own process, see :mod:`tools.bench.judge_fake`) answering after a fixed
latency, and reports in the same run:

* cells/s against the ideal ``concurrency / latency`` (goal: at least 90 %);
* the same with one call that is ten times slower: the time the other cells take against
  the ideal with one slot held by the slow call, and how many finished while it was in
  flight (no head-of-line blocking means they do not wait for it);
* LLM calls per judged cell;
* the tier phase (:mod:`tools.bench.judge_tier`): a fresh fake enforcing a tier of
  requests and input/output tokens per minute (a shortened minute), the worker pacing
  itself from the fake's rate-limit headers: share of the tier used (goal >= 90 %), 429s
  received (goal 0), cells/s, result statuses, and the share of input tokens served by the
  prompt cache, as measured: the fake simulates caching per breakpoint with the
  configured model's real minimum cacheable prefix (catalogue), from a cold cache, so the
  share is cache reads over all input tokens (input + cache writes + cache reads) of the
  phase's results. Goal: at least 60 %.

The fake answers every call with an analysis that passes the judge's checks: results are
``ok``, and their statuses are reported so that a regression shows.

Phase timing uses the results themselves: a cell starts at ``judged_at - latency_ms``.
The fake server lives in ``tools/fakes``, so the benchmark runs from a source checkout.
"""

from __future__ import annotations

import argparse
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

from agents.context.assemble import gather
from agents.context.charts import ChartStore
from agents.judge.prompt import build_request
from agents.judge.run import serve
from agents.providers.base import LLMRequest
from agents.providers.factory import make_provider, model_entry
from agents.providers.limits import Budget
from cli.argtypes import non_negative_int, positive_float, positive_int
from schemas.chart_review import AgentAnswer, JudgeJob
from schemas.skill import load_skill
from streams import kafka_clients
from streams.settings import Settings, TopicSettings
from tools.bench import judge_tier as bench_tier
from tools.bench.judge_fake import SLOW_MARK
from tools.bench.verdict import goal
from tools.broker import EmbeddedBroker

log = logging.getLogger(__name__)
REPO = Path(__file__).resolve().parents[2]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("judge", help="judge worker cells/s vs concurrency/latency (fake API)",
                       description="Run the judge worker against a local fake Messages API "
                       "with a fixed latency; report cells/s against concurrency/latency, "
                       "the effect of one slow call, LLM calls per cell, then, against a "
                       "fake that enforces a tier, the share of the tier used, 429s and the "
                       "prompt-cache share.")
    p.add_argument("--cells", type=non_negative_int, default=100,
                   help="jobs per latency phase (default 100; 0 skips those phases)")
    p.add_argument("--latency", type=positive_float, default=0.5,
                   help="fake response latency, s")
    p.add_argument("--concurrency", type=positive_int, default=8,
                   help="llm.concurrency (default 8)")
    p.add_argument("--slow-factor", type=positive_float, default=10.0,
                   help="the slow call takes this many times the latency (default 10)")
    p.add_argument("--external", action="store_true",
                   help="use the configured cluster instead of a fresh embedded broker")
    bench_tier.add_arguments(p)
    p.set_defaults(func=lambda args, settings: run_bench(settings, args))


def bench_jobs(settings: Settings, n: int, slow: bool) -> list[JudgeJob]:
    """``n`` disagreement jobs built from the sample answers, cycling through their cells."""
    cells: dict[str, list[AgentAnswer]] = {}
    path = Path(settings.skill_dir).parent / "answers.jsonl"
    for line in path.read_bytes().splitlines():
        a = AgentAnswer.model_validate_json(line)
        cells.setdefault(a.key, []).append(a)
    pairs = [v[:2] for v in cells.values() if len(v) >= 2]
    jobs = []
    for i in range(n):
        a, b = pairs[i % len(pairs)]
        if slow and i == 0:
            a = a.model_copy(update={"rationale": SLOW_MARK})
        jobs.append(JudgeJob(job_id=f"bench-{uuid.uuid4().hex}", kind="disagreement",
                             task_id=a.task_id, patient_id=a.patient_id, field_id=a.field_id,
                             answers=(a, b), normalized=(a.answer, b.answer),
                             reasons=("benchmark",), detected_at=datetime.now().astimezone()))
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
    skill = load_skill(settings.skill_dir)
    store = ChartStore(settings.charts_dir)
    minimum = model_entry(settings.llm).min_cache_tokens
    out = []
    for job in jobs:
        crit = skill.criteria[job.field_id]
        notes = store.notes(job.patient_id)
        ctx = gather(job.answers, crit.keywords, notes, settings.llm.context_budget_chars)
        out.append(build_request(skill, crit, job, ctx, structured=settings.llm.structured_output,
                                 max_tokens=settings.llm.max_tokens, notes=notes,
                                 min_cache_tokens=minimum))
    return out


def cache_served_share(usages: list[dict[str, Any]]) -> float:
    """Cache reads over all input tokens (uncached input + cache writes + cache reads)."""
    read = sum(u.get("cache_read_input_tokens", 0) for u in usages)
    total = read + sum(u.get("input_tokens", 0) + u.get("cache_creation_input_tokens", 0)
                       for u in usages)
    return read / total if total else 0.0


def ideal_with_slow_call(others: int, slow_s: float, conc: int, latency: float) -> float:
    """Seconds ``others`` cells need when one of ``conc`` slots is held for ``slow_s``."""
    if conc <= 1:
        return slow_s + others * latency
    during = (conc - 1) / latency * slow_s
    if others <= during:
        return others / ((conc - 1) / latency)
    return slow_s + (others - during) / (conc / latency)


def run_bench(settings: Settings, args: argparse.Namespace) -> int:
    latency, conc, n = args.latency, args.concurrency, args.cells
    slow_s = latency * args.slow_factor
    broker = None if args.external else EmbeddedBroker().start()
    try:
        kafka = settings.kafka.model_copy(update={
            "bootstrap_servers": settings.kafka.bootstrap_servers if broker is None
            else broker.bootstrap})
        llm = settings.llm.model_copy(update={
            "provider": "anthropic", "concurrency": conc, "requests_per_minute": 1_000_000,
            "sdk_max_retries": 0, "deadline_seconds": max(60.0, 4 * slow_s)})
        s = settings.model_copy(update={"kafka": kafka, "llm": llm, "log_level": "WARNING"})
        for name in ("agents", "streams", "httpx2", "httpx", "aiokafka"):
            logging.getLogger(name).setLevel(logging.WARNING)
        if n > 0:
            _latency_phases(s, max(2, n), latency, conc, slow_s)
        if args.tier_cells > 0:
            bench_tier.run(settings, s, args)
    finally:
        if broker is not None:
            broker.stop()
    return 0


def _latency_phases(s: Settings, n: int, latency: float, conc: int, slow_s: float) -> None:
    timeout = 120 + 4 * n * latency / conc
    ideal = conc / latency
    print(f"judge bench: {n} cells per phase, concurrency {conc}, fake latency "
          f"{latency:g}s -> ideal {ideal:.1f} cells/s (no tier limit)", flush=True)
    with fake_server(latency, slow_s) as fake:
        jobs = bench_jobs(s, n, slow=False)
        uniform = asyncio.run(run_phase(s, fake.url, jobs, timeout))
        start, end = uniform.span()
        rate = n / (end - start)
        share = round(100 * rate / ideal)  # the verdict judges the figure as printed
        print(f"  uniform latency: {rate:.1f} cells/s ({n} in {end - start:.2f}s) = "
              f"{share}% of ideal {goal('>= 90%', share >= 90)}", flush=True)
        slow_jobs = bench_jobs(s, n, slow=True)
        slow = asyncio.run(run_phase(s, fake.url, slow_jobs, timeout))
    _report_slow(slow, slow_jobs[0].job_id, slow_s, conc, latency)
    calls = sum(r["usage"]["llm_calls"] for r in uniform.results) / n
    print(f"  LLM calls per judged cell: {calls:.2f}", flush=True)


def _report_slow(phase: Phase, slow_job: str, slow_s: float, conc: int, latency: float) -> None:
    slow = next(r for r in phase.results if r["job_id"] == slow_job)
    others = [r for r in phase.results if r["job_id"] != slow_job]
    slow_start, slow_end = phase.span([slow])
    start, _ = phase.span()
    _, others_end = phase.span(others)
    during = sum(1 for r in others
                 if slow_start <= datetime.fromisoformat(r["judged_at"]).timestamp() <= slow_end)
    best = ideal_with_slow_call(len(others), slow_s, conc, latency)
    took = others_end - start
    could = min(len(others), int((conc - 1) * slow_s / latency))
    print(f"  one slow call ({slow_s:g}s) among {len(others) + 1}: the other {len(others)} "
          f"cells took {took:.2f}s, ideal {best:.2f}s = {100 * best / took:.0f}% of ideal; "
          f"while it was in flight {during} others finished (at most {could} could)",
          flush=True)

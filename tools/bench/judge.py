"""``judgeflow bench judge``: judge-worker throughput against the fake Messages API.

Runs the real worker (broker, ConcurrentWorker, Anthropic SDK, validation) against the local
fake server (its own process, see :mod:`tools.bench.judge_fake`) answering after a fixed
latency, and reports in the same run:

* cells/s against the ideal ``concurrency / latency`` (goal: at least 90 %);
* the same with one call that is ten times slower: the time the other cells take against
  the ideal with one slot held by the slow call, and how many finished while it was in
  flight (no head-of-line blocking means they do not wait for it);
* LLM calls per judged cell, and the share of input tokens served by the prompt cache, as
  measured: the fake simulates prompt caching with the configured model's real minimum
  cacheable prefix (catalogue), so the share is cache reads over all input tokens (input +
  cache writes + cache reads) of the uniform phase's results. Goal: at least 60 %.

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
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from agents.context.assemble import gather
from agents.context.charts import ChartStore
from agents.judge.prompt import build_request
from agents.judge.run import serve
from agents.providers.base import LLMRequest
from agents.providers.factory import make_provider, model_entry
from schemas.chart_review import AgentAnswer, JudgeJob
from schemas.skill import load_skill
from streams.settings import Settings, TopicSettings
from tools.bench.judge_fake import SLOW_MARK
from tools.broker import EmbeddedBroker

log = logging.getLogger(__name__)
REPO = Path(__file__).resolve().parents[2]


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("judge", help="judge worker cells/s vs concurrency/latency (fake API)",
                       description="Run the judge worker against a local fake Messages API "
                       "with a fixed latency; report cells/s against concurrency/latency, "
                       "the effect of one slow call, LLM calls per cell and the prompt-cache "
                       "share.")
    p.add_argument("--cells", type=int, default=200, help="jobs per phase (default 200)")
    p.add_argument("--latency", type=float, default=0.5, help="fake response latency, s")
    p.add_argument("--concurrency", type=int, default=8, help="llm.concurrency (default 8)")
    p.add_argument("--slow-factor", type=float, default=10.0,
                   help="the slow call takes this many times the latency (default 10)")
    p.add_argument("--external", action="store_true",
                   help="use the configured cluster instead of a fresh embedded broker")
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


@contextlib.contextmanager
def fake_server(latency: float, slow: float) -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tools.bench.judge_fake", "--latency", str(latency),
         "--slow", str(slow)], cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http"):
            raise SystemExit("judgeflow bench judge: the fake server did not start (it needs "
                             "tools/fakes: run from a source checkout)")
        yield url
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass
class Phase:
    results: list[dict[str, Any]]

    def span(self, results: list[dict[str, Any]] | None = None) -> tuple[float, float]:
        rows = self.results if results is None else results
        ends = [datetime.fromisoformat(r["judged_at"]).timestamp() for r in rows]
        starts = [e - r["latency_ms"] / 1000 for e, r in zip(ends, rows, strict=True)]
        return min(starts), max(ends)


async def _phase(settings: Settings, url: str, jobs: list[JudgeJob], timeout: float) -> Phase:
    from streams.topics import ensure_topics

    tag = uuid.uuid4().hex[:8]
    topics = {k: f"bench{tag}.{v}" for k, v in TopicSettings().model_dump().items()}
    s = settings.model_copy(update={
        "topics": TopicSettings(**topics),
        "groups": settings.groups.model_copy(update={"judge": f"bench{tag}-judge"})})
    bs = s.kafka.bootstrap_servers
    await ensure_topics(s)
    producer = AIOKafkaProducer(bootstrap_servers=bs, acks="all", linger_ms=5)
    await producer.start()
    try:
        sent = [await producer.send(s.topics.judge_jobs, key=j.key.encode(),
                                    value=j.model_dump_json().encode()) for j in jobs]
        await asyncio.gather(*sent)
    finally:
        await producer.stop()
    stop = asyncio.Event()
    provider = make_provider(s, base_url=url, api_key="bench")
    task = asyncio.create_task(serve(s, provider, stop=stop))
    try:
        results = await _read(bs, s.topics.judge_results, len(jobs), timeout)
    finally:
        stop.set()
        await asyncio.wait_for(task, 60)
    if len(results) < len(jobs):
        raise SystemExit(f"judgeflow bench judge: only {len(results)}/{len(jobs)} results")
    return Phase(results)


async def _read(bootstrap: str, topic: str, n: int, timeout: float) -> list[dict[str, Any]]:
    """The first ``n`` records of ``topic`` (from the beginning), or fewer at ``timeout``."""
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, enable_auto_commit=False,
                                auto_offset_reset="earliest")
    await consumer.start()
    out: list[dict[str, Any]] = []
    try:
        async with asyncio.timeout(timeout):
            while len(out) < n:
                batch = await consumer.getmany(timeout_ms=200)
                out += [orjson.loads(r.value) for recs in batch.values() for r in recs]
    except TimeoutError:
        pass
    finally:
        await consumer.stop()
    return out


def judge_requests(settings: Settings, jobs: list[JudgeJob]) -> list[LLMRequest]:
    """The requests the worker sends for ``jobs`` (built the same way, without sending)."""
    skill = load_skill(settings.skill_dir)
    store = ChartStore(settings.charts_dir)
    out = []
    for job in jobs:
        crit = skill.criteria[job.field_id]
        ctx = gather(job.answers, crit.keywords, store.notes(job.patient_id),
                     settings.llm.context_budget_chars)
        out.append(build_request(skill, crit, job, ctx, structured=settings.llm.structured_output,
                                 max_tokens=settings.llm.max_tokens))
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
    latency, conc, n = args.latency, args.concurrency, max(2, args.cells)
    slow_s = latency * args.slow_factor
    broker = None if args.external else EmbeddedBroker().start()
    try:
        kafka = settings.kafka.model_copy(update={
            "bootstrap_servers": settings.kafka.bootstrap_servers if broker is None
            else broker.bootstrap,
            "idle_fetch_backoff_ms": settings.kafka.idle_fetch_backoff_ms or (20 if broker else 0)})
        llm = settings.llm.model_copy(update={
            "provider": "anthropic", "concurrency": conc, "requests_per_minute": 1_000_000,
            "sdk_max_retries": 0, "deadline_seconds": max(60.0, 4 * slow_s)})
        s = settings.model_copy(update={"kafka": kafka, "llm": llm, "log_level": "WARNING"})
        for name in ("agents", "streams", "httpx2", "httpx", "aiokafka"):
            logging.getLogger(name).setLevel(logging.WARNING)
        timeout = 120 + 4 * n * latency / conc
        ideal = conc / latency
        print(f"judge bench: {n} cells per phase, concurrency {conc}, fake latency "
              f"{latency:g}s -> ideal {ideal:.1f} cells/s", flush=True)
        with fake_server(latency, slow_s) as url:
            jobs = bench_jobs(s, n, slow=False)
            uniform = asyncio.run(_phase(s, url, jobs, timeout))
            start, end = uniform.span()
            rate = n / (end - start)
            print(f"  uniform latency: {rate:.1f} cells/s ({n} in {end - start:.2f}s) = "
                  f"{100 * rate / ideal:.0f}% of ideal (goal >= 90%)", flush=True)
            slow_jobs = bench_jobs(s, n, slow=True)
            slow = asyncio.run(_phase(s, url, slow_jobs, timeout))
        _report_slow(slow, slow_jobs[0].job_id, slow_s, conc, latency)
        calls = sum(r["usage"]["llm_calls"] for r in uniform.results) / n
        share = cache_served_share([r["usage"] for r in uniform.results])
        minimum = model_entry(s.llm).min_cache_tokens
        print(f"  LLM calls per judged cell: {calls:.2f}")
        print(f"  prompt cache ({s.llm.model}, caches prefixes >= {minimum} tokens): "
              f"{100 * share:.0f}% of input tokens served from the cache (goal >= 60%)")
    finally:
        if broker is not None:
            broker.stop()
    return 0


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

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
import logging
from datetime import datetime
from pathlib import Path

from agents.settings import Settings
from streams.argtypes import non_negative_int, positive_float, positive_int
from tools.bench import judge_tier as bench_tier
from tools.bench.judge_phase import Phase, bench_jobs, fake_server, run_phase
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

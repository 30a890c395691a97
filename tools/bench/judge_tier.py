"""The tier phase of ``judgeflow bench judge``: how much of an API tier the judge uses.

The fake API (:mod:`tools.bench.judge_fake`) enforces a tier of ``rpm`` requests,
``itpm`` input tokens and ``otpm`` output tokens per minute as token buckets that start
full. To keep the benchmark short the fake's minute lasts ``minute_seconds`` real seconds
(default 3: twenty tier-minutes a minute) and the worker's pacer is told the same minute;
every rate below is per tier-minute, so the figures do not depend on the scaling.

Share of the tier, per dimension: what the fake admitted over what the tier allowed in the
same span, that is the full bucket at the start plus the refill from the first admitted
request to the last: ``spent / (limit + limit * span / minute_seconds)``. The dimension
with the highest share is the one that binds; goal >= 90 % with no 429 (the fake counts
what it refused). The arithmetic is pure; :func:`run` runs the phase.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from collections import Counter
from dataclasses import dataclass
from typing import Any

from agents.providers.factory import model_entry
from agents.settings import Settings
from streams.argtypes import non_negative_int, positive_float, positive_int
from tools.bench.judge_phase import bench_jobs, cache_served_share, fake_server, run_phase
from tools.bench.verdict import goal

DIMENSIONS = {"requests": "rpm", "input-tokens": "itpm", "output-tokens": "otpm"}


def add_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("tier phase (the fake API enforces these limits)")
    g.add_argument("--rpm", type=positive_int, default=100,
                   help="requests per minute (default 100)")
    g.add_argument("--itpm", type=positive_int, default=120_000,
                   help="input tokens per minute, cache reads excluded (default 120000)")
    g.add_argument("--otpm", type=positive_int, default=40_000,
                   help="output tokens per minute (default 40000)")
    g.add_argument("--minute-seconds", type=positive_float, default=3.0,
                   help="real seconds per tier-minute on the fake and in the pacer "
                   "(default 3)")
    g.add_argument("--tier-cells", type=non_negative_int, default=300,
                   help="jobs in the tier phase (default 300; 0 skips the phase)")
    g.add_argument("--tier-concurrency", type=positive_int, default=24,
                   help="llm.concurrency in the tier phase (default 24)")
    g.add_argument("--baseline-cells", type=non_negative_int, default=300,
                   help="jobs of the baseline that ignores the headers (default 300; 0 "
                   "skips it)")


def fake_args(args: argparse.Namespace) -> list[str]:
    return ["--rpm", str(args.rpm), "--itpm", str(args.itpm), "--otpm", str(args.otpm),
            "--minute-seconds", str(args.minute_seconds)]


@dataclass(frozen=True)
class TierUse:
    limits: dict[str, int]
    spent: dict[str, float]
    refused: dict[str, int]
    span: float
    minute_seconds: float

    @classmethod
    def from_stats(cls, stats: dict[str, Any]) -> TierUse:
        tier = stats["tier"]
        span = (stats["last"] - stats["first"]) if stats.get("first") is not None else 0.0
        return cls({d: int(tier[k]) for d, k in DIMENSIONS.items()}, dict(stats["spent"]),
                   dict(stats["refused"]), float(span), float(tier["minute_seconds"]))

    def allowed(self, dim: str) -> float:
        return self.limits[dim] * (1 + self.span / self.minute_seconds)

    def share(self, dim: str) -> float:
        allowed = self.allowed(dim)
        return self.spent.get(dim, 0.0) / allowed if allowed else 0.0

    @property
    def binding(self) -> str:
        return max(self.limits, key=self.share)

    @property
    def refusals(self) -> int:
        return sum(self.refused.values())


def report(use: TierUse, cells: int, seconds: float, statuses: dict[str, int],
           cache_share: float, model: str, minimum: int, tier: bool = True) -> list[str]:
    b = use.binding
    lines = [f"  tier: {use.limits['requests']:,} requests, {use.limits['input-tokens']:,} "
             f"input and {use.limits['output-tokens']:,} output tokens per minute (a minute "
             f"= {use.minute_seconds:g}s on the fake and in the pacer)"] if tier else []
    for dim in use.limits:
        mark = "  <- binds" if dim == b else ""
        lines.append(f"    {dim:<13} {use.spent.get(dim, 0):>9,.0f} of the "
                     f"{use.allowed(dim):>9,.0f} allowed in {use.span:.1f}s = "
                     f"{100 * use.share(dim):3.0f}%{mark}")
    lines += [f"  share of the tier used: {100 * use.share(b):.0f}% ({b}) "
              f"{goal('>= 90%', round(100 * use.share(b)) >= 90)}, "
              f"429s received: {use.refusals} {goal('0', use.refusals == 0)}",
              f"  {cells} cells judged in {seconds:.1f}s = {cells / seconds:.1f} cells/s; results: "
              + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())),
              f"  prompt cache ({model}, caches prefixes >= {minimum} tokens, cold start): "
              f"{100 * cache_share:.0f}% of input tokens served from the cache "
              f"{goal('>= 60%', round(100 * cache_share) >= 60)}"]
    return lines


def run(configured: Settings, s: Settings, args: argparse.Namespace) -> None:
    """The worker starts from the configured requests_per_minute, as in production, and
    then follows the fake's headers. The baseline, on a fresh fake with the same tier,
    ignores the headers: only the concurrency cap and retry-after after each 429."""
    n, conc = args.tier_cells, args.tier_concurrency
    llm = s.llm.model_copy(update={"concurrency": conc, "requests_per_minute":
                                   configured.llm.requests_per_minute})
    st = s.model_copy(update={"llm": llm})
    print(f"judge bench, tier phase: {n} cells, concurrency {conc}, fake latency "
          f"{args.latency:g}s (without the tier: {conc / args.latency:.0f} cells/s)",
          flush=True)
    runs = [("paced by the headers", False, n, st)]
    if args.baseline_cells > 0:
        blind = st.model_copy(update={"llm": llm.model_copy(update={
            "requests_per_minute": 1_000_000})})
        runs.append(("baseline, headers ignored", True, args.baseline_cells, blind))
    for title, is_blind, cells, settings in runs:
        # the baseline's 429s and dead letters are the point; counted below, not logged
        for name in ("agents", "streams"):
            logging.getLogger(name).setLevel(logging.ERROR if is_blind else logging.WARNING)
        with fake_server(args.latency, args.latency, fake_args(args)) as fake:
            jobs = bench_jobs(settings, cells, slow=False)
            timeout = 120 + 4 * cells * args.latency / conc
            phase = asyncio.run(run_phase(settings, fake.url, jobs, timeout, args.minute_seconds,
                                       blind=is_blind))
        start, end = phase.span()
        use = TierUse.from_stats(fake.stats)
        statuses = Counter(str(r["status"]) for r in phase.results)
        if phase.dead_lettered:
            statuses["dead-lettered"] = phase.dead_lettered
        share = cache_served_share([r["usage"] for r in phase.results])
        print(f" {title}:")
        for line in report(use, len(phase.results), end - start, dict(statuses),
                                      share,
                                      st.llm.model, model_entry(st.llm).min_cache_tokens,
                                      tier=not is_blind):
            print(line, flush=True)

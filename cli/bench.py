"""``judgeflow bench detect|judge``: benchmarks that report ratios against a same-run baseline."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import uuid

from streams.fetch_backoff import install_idle_fetch_backoff
from streams.settings import Settings


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("bench", help="benchmarks (detect, judge)",
                       description="Each benchmark measures its baseline in the same run and "
                       "prints the ratio (this machine is shared and noisy: absolute numbers "
                       "mean little).")
    bsub = p.add_subparsers(dest="bench", metavar="BENCH", required=True)
    d = bsub.add_parser("detect", help="detect worker events/s vs a raw aiokafka passthrough",
                        description="Pre-load N synthetic answers, then measure the detect "
                        "worker and a plain consume-and-produce passthrough on the same broker.")
    d.add_argument("--events", type=int, default=20000, help="answers to process (default 20000)")
    d.add_argument("--external", action="store_true",
                   help="use the configured cluster instead of a fresh embedded broker")
    d.add_argument("--timeout", type=float, default=600.0, help="give up after S seconds")
    d.set_defaults(func=run_detect)
    try:
        judge = importlib.import_module("tools.bench.judge")
    except ModuleNotFoundError:
        return
    judge.add_parser(bsub)


def run_detect(args: argparse.Namespace, settings: Settings) -> int:
    from streams.topics import ensure_topics, send_all
    from tools.bench.detect import (
        bench_topics,
        passthrough,
        run_worker_until,
        synthetic_answers,
    )
    from tools.broker import EmbeddedBroker  # dev-only (the `dev` extra)

    if args.events < 2:
        raise SystemExit("judgeflow bench detect: --events must be at least 2")
    broker = None if args.external else EmbeddedBroker().start()
    if broker is not None:  # our own measuring consumers must not spin on the embedded broker
        install_idle_fetch_backoff(50)
    try:
        bs = settings.kafka.bootstrap_servers if broker is None else broker.bootstrap
        tag = uuid.uuid4().hex[:6]
        kafka = settings.kafka.model_copy(update={
            "bootstrap_servers": bs,
            "idle_fetch_backoff_ms": settings.kafka.idle_fetch_backoff_ms or (50 if broker else 0)})
        s = settings.model_copy(update={
            "kafka": kafka, "topics": bench_topics(tag),
            "groups": settings.groups.model_copy(update={"detect": f"bench{tag}-detect"}),
            "settle_seconds": 3600.0, "log_level": "WARNING"})
        asyncio.run(ensure_topics(s, extra=[f"bench{tag}.passthrough",
                                            f"bench{tag}.faust-forward"]))
        records = synthetic_answers(s, args.events)
        n = len(records)
        print(f"producing {n} answers to {s.topics.agent_answers} on {bs} ...", flush=True)
        asyncio.run(send_all(bs, s.topics.agent_answers, records))
        print("passthrough (aiokafka consume -> produce) ...", flush=True)
        base = asyncio.run(passthrough(s, s.topics.agent_answers, f"bench{tag}.passthrough", n))
        print(f"  {base.rate:,.0f} events/s ({n} in {base.seconds:.2f}s)", flush=True)
        print("Faust forward (a Faust agent that only copies records: Faust's floor) ...",
              flush=True)
        sink = f"bench{tag}.faust-forward"
        floor = run_worker_until(s, n, sink, args.timeout,
                                 ("tools.bench.faust", s.topics.agent_answers, sink), n)
        print(f"  {floor.rate:,.0f} events/s ({n} in {floor.seconds:.2f}s)", flush=True)
        print("detect worker (Faust: decode, decide, table write, emit) ...", flush=True)
        det = run_worker_until(s, n, s.topics.cell_outcomes, args.timeout)
        print(f"  {det.rate:,.0f} events/s ({n} in {det.seconds:.2f}s)", flush=True)
        print(f"ratio passthrough/detect: {base.rate / det.rate:.2f}x "
              f"(goal: <= 2x; detect reaches {100 * det.rate / base.rate:.0f}% of passthrough)")
        print(f"ratio passthrough/Faust forward: {base.rate / floor.rate:.2f}x; "
              f"Faust forward/detect: {floor.rate / det.rate:.2f}x")
    finally:
        if broker is not None:
            broker.stop()
    return 0

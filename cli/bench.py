"""``judgeflow bench detect|judge``: benchmarks that report ratios against a same-run baseline."""

from __future__ import annotations

import argparse

from streams.argtypes import non_negative_int, positive_float, positive_int
from streams.exit_codes import ExitCode
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
    d.add_argument("--events", type=positive_int, default=20000,
                   help="answers to process (default 20000)")
    d.add_argument("--input-partitions", type=non_negative_int, default=0, metavar="P",
                   help="create the input topic with P partitions first, as a producer's "
                   "auto-creation would (default: kafka.partitions)")
    d.add_argument("--live", action="store_true",
                   help="also measure live arrival: answers produced while the worker runs")
    d.add_argument("--processes", type=positive_int, default=1, metavar="K",
                   help="also measure K detect worker processes sharing the input (K > 1)")
    d.add_argument("--rounds", type=positive_int, default=1, metavar="R",
                   help="run the forward-only agent and the detect worker R times each, "
                   "alternating which goes first, and report the median ratio (the machine "
                   "is shared: one run decides little; default 1)")
    d.add_argument("--memory", type=non_negative_int, default=0, metavar="CELLS",
                   help="only measure the detect worker's RSS per 10,000 open cells, with "
                   "CELLS cells copied from the sample")
    d.add_argument("--core", action="store_true",
                   help="only measure our code alone (no Kafka): µs per event")
    d.add_argument("--broker", choices=("both", "embedded", "apache"), default="both",
                   help="measure on a fresh embedded broker, a fresh 1-node Apache Kafka "
                   "(needs Java + Maven; skipped with the reason otherwise), or both one "
                   "after the other (default)")
    d.add_argument("--external", action="store_true",
                   help="use the configured cluster instead of fresh brokers")
    d.add_argument("--timeout", type=positive_float, default=600.0, help="give up after S seconds")
    d.set_defaults(func=run_detect)
    try:
        from tools.bench import judge  # dev tooling (the `dev` extra); listed in the contracts
    except ModuleNotFoundError:
        return
    judge.add_parser(bsub)


def run_detect(args: argparse.Namespace, settings: Settings) -> int:
    from tools.bench.brokers import KINDS, bench_broker
    from tools.bench.detect_core import core_run
    from tools.bench.detect_runs import detect_runs, memory_run, summary

    if args.events < 2:
        raise SystemExit("judgeflow bench detect: --events must be at least 2")
    if args.core:
        core_run(settings.model_copy(update={"settle_seconds": 3600.0}), args.events)
        return ExitCode.OK
    kinds = ["external"] if args.external else [
        k for k in KINDS if args.broker in ("both", k)]
    base = settings.model_copy(update={"settle_seconds": 3600.0, "log_level": "WARNING"})
    ratios: dict[str, dict[str, float]] = {}
    for kind in kinds:
        with bench_broker(kind, base) as b:
            if isinstance(b, str):
                print(b, flush=True)
                continue
            print(f"== on {b.label}", flush=True)
            if args.memory:
                memory_run(b.settings, args.memory, args.timeout)
                continue
            ratios[b.label] = detect_runs(
                b.settings, args.events, args.timeout, input_partitions=args.input_partitions,
                live=args.live, processes=args.processes, rounds=args.rounds)
    summary(ratios)
    return ExitCode.OK

"""``judgeflow demo``: the whole pipeline on an embedded broker with the bundled samples."""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from agents.settings import Settings
from cli.argtypes import port, positive_float


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "demo", help="run detect, judge and debrief on an embedded broker with sample data",
        description="Start an embedded Kafka-protocol broker and the detect, judge and debrief "
        "workers; send the bundled sample answers (including malformed ones) and debrief "
        "requests; print cells by outcome, jobs by kind, dead letters, judge results and "
        "debrief verdicts. Uses Claude when ANTHROPIC_API_KEY is set, else the offline "
        "providers. The calibrate worker compares the judge with the sample adjudications; the "
        "summary ends with its table of answer accuracy and Cohen's kappa per field and prompt "
        "version. Stops everything it started; exit status 0 when every record was handled. "
        "The work directory (worker logs, broker data) is removed after a successful run "
        "unless --keep-logs is given; after a failure it is kept and its path printed.")
    p.add_argument("--settle", type=positive_float, default=5.0,
                   help="settle window in seconds for cells missing an agent (default 5)")
    p.add_argument("--timeout", type=positive_float, default=300.0,
                   help="give up after S seconds (default 300)")
    p.add_argument("--offline", action="store_true",
                   help="use the offline providers even if ANTHROPIC_API_KEY is set")
    p.add_argument("--dashboard", action="store_true",
                   help="after the summary, serve the review page over the demo's topics "
                   "and keep it (and the broker) running until Ctrl-C")
    p.add_argument("--dashboard-port", type=port, default=8765, metavar="PORT",
                   help="port of the review page on 127.0.0.1 (default 8765)")
    p.add_argument("--keep-logs", action="store_true",
                   help="keep the work directory with the worker logs after a successful run")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    from cli.produce import produce
    from tools.demo.run import run as run_demo

    hold = None
    if args.dashboard:
        # dev tooling (the `dev` extra), imported only when asked for; listed in the contracts
        from tools import dashboard_launch as launch
        port = args.dashboard_port

        def hold(s: Settings, work: Path) -> None:
            launch.hold_open(s, work, port, sys.stdout)

    work = Path(tempfile.mkdtemp(prefix="judgeflow-demo-"))
    try:
        code = run_demo(settings, settle=args.settle, timeout=args.timeout,
                        offline=args.offline, out=sys.stdout, produce_fn=produce, hold_fn=hold,
                        work_dir=work, keep_logs=args.keep_logs)
    except BaseException:
        print(f"judgeflow demo: stopped; worker logs kept in {work}", file=sys.stderr)
        raise
    if code == 0 and not args.keep_logs:
        shutil.rmtree(work, ignore_errors=True)
    return code

"""``judgeflow worker NAME``: run one worker against the configured cluster."""

from __future__ import annotations

import argparse
from importlib.metadata import entry_points

from streams.exit_codes import ExitCode
from streams.settings import Settings

#: worker name -> its ``run_worker(settings) -> int`` entry point, declared in pyproject.toml
#: under ``[project.entry-points."judgeflow.workers"]`` so that no lower layer names the workers.
WORKERS = {ep.name: ep for ep in entry_points(group="judgeflow.workers")}


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("worker", help="run one worker (detect, judge, debrief, calibrate)",
                       description="Run one worker in the foreground against "
                       "$JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS until SIGTERM/Ctrl-C. Scale out by "
                       "starting more processes of the same worker (same consumer group).")
    p.add_argument("name", choices=sorted(WORKERS), help="which worker")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    return ExitCode(WORKERS[args.name].load()(settings) or ExitCode.OK)

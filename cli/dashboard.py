"""``judgeflow dashboard``: the command's arguments and its run; the page itself (server,
feed, web app) lives in the ``dashboard`` package."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from cli.argtypes import port, positive_int
from dashboard.security import TOKEN_ENV, check_bind
from dashboard.serve import serve
from streams.exit_codes import CommandError, ExitCode
from streams.settings import Settings

DEFAULT_PORT = 8765


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1",
                   help=f"address to bind (default 127.0.0.1; any other address needs "
                   f"${TOKEN_ENV}, at least 16 characters)")
    p.add_argument("--port", type=port, default=DEFAULT_PORT,
                   help=f"port (default {DEFAULT_PORT}; 0 = a free port)")
    p.add_argument("--from-beginning", action="store_true",
                   help="read the topics from their beginning (default: only new records)")
    p.add_argument("--window", type=positive_int, default=5000, metavar="N",
                   help="keep the newest N records per topic in memory (default 5000)")


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "dashboard", help="serve the live review page (127.0.0.1 by default)",
        description="Follow the judge results, judge jobs, case evaluations and calibration "
        "topics and serve a live review page: the triage queue with filters, a cell's "
        "reasoning and evidence excerpts, debrief cards, calibration and cost per prompt "
        "version. Binds 127.0.0.1 unless --host says otherwise; any other address requires "
        "a bearer token in $JUDGEFLOW_DASHBOARD_TOKEN. Ctrl-C stops it.")
    add_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    token = os.environ.get(TOKEN_ENV) or None
    try:
        check_bind(args.host, token)
        if args.window < 1:
            raise ValueError("--window must be at least 1")
    except ValueError as exc:
        raise CommandError(f"dashboard: {exc}") from None
    try:
        asyncio.run(serve(settings, host=args.host, port=args.port,
                          from_beginning=args.from_beginning, window=args.window,
                          token=token, out=sys.stdout))
    except (OSError, OverflowError) as exc:
        raise CommandError(f"dashboard: cannot listen on {args.host}:{args.port}: "
                           f"{getattr(exc, 'strerror', None) or exc}", ExitCode.FAILURE) from None
    return ExitCode.OK

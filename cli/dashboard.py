"""``judgeflow dashboard``: the command's arguments and its run; the page itself (server,
feed, web app) lives in the ``dashboard`` package."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dashboard.identity import TOKEN_ENV
from streams import event_loop
from streams.argtypes import port, positive_int
from streams.exit_codes import CommandError, ExitCode
from streams.settings import Settings

DEFAULT_PORT = 8765


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default="127.0.0.1",
                   help=f"address to bind (default 127.0.0.1; any other address needs "
                   f"${TOKEN_ENV} (16+ characters) or --reviewers, and TLS)")
    p.add_argument("--port", type=port, default=DEFAULT_PORT,
                   help=f"port (default {DEFAULT_PORT}; 0 = a free port)")
    p.add_argument("--from-beginning", action="store_true",
                   help="also read the debrief evaluations from their beginning (the work "
                   "list - results, jobs, adjudications, calibration - always is)")
    p.add_argument("--window", type=positive_int, default=5000, metavar="N",
                   help="keep about N decided or superseded records per topic in memory "
                   "(default 5000); pending cells are always kept")
    add_review_arguments(p)


def add_review_arguments(p: argparse.ArgumentParser) -> None:
    """Reviewers, TLS and the limits a page on a network needs (docs/api.md)."""
    p.add_argument("--reviewers", type=Path, metavar="FILE",
                   help="reviewer tokens: lines '<name> sha256:<hex of the token>' "
                   "(or $JUDGEFLOW_DASHBOARD_REVIEWERS_FILE)")
    p.add_argument("--add-reviewer", metavar="NAME",
                   help="add NAME with a new token to --reviewers FILE, print the token, exit")
    p.add_argument("--tls-cert", type=Path, metavar="PEM",
                   help="serve HTTPS with this certificate chain (needs --tls-key); any "
                   "address other than loopback requires TLS")
    p.add_argument("--tls-key", type=Path, metavar="PEM", help="the certificate's key")
    p.add_argument("--allowed-host", action="append", metavar="NAME",
                   help="a Host name the page answers besides localhost/127.0.0.1/::1 and "
                   "the bound address (repeatable; e.g. the proxy's public name)")
    p.add_argument("--max-connections", type=positive_int, default=256, metavar="N",
                   help="open connections at most; more get 503 (default 256)")
    p.add_argument("--max-connections-per-client", type=positive_int, default=64, metavar="N",
                   help="open connections of one client address at most; more get 503 "
                   "(default 64; behind a reverse proxy every connection is the proxy's)")
    p.add_argument("--max-streams", type=positive_int, default=64, metavar="N",
                   help="live pages (event streams) at most; more get 503 (default 64)")


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
    # imported when the page runs: its web server (aiohttp) is a third of every other
    # command's start-up
    from dashboard.server import add_reviewer_command, prepare, serve

    if getattr(args, "add_reviewer", None):
        return ExitCode(add_reviewer_command(args))
    try:
        state, tls = prepare(args, settings)
    except ValueError as exc:
        raise CommandError(f"dashboard: {exc}") from None
    try:
        event_loop.run(serve(settings, state, host=args.host, port=args.port,
                          from_beginning=args.from_beginning, out=sys.stdout, tls=tls))
    except (OSError, OverflowError) as exc:
        raise CommandError(f"dashboard: cannot listen on {args.host}:{args.port}: "
                           f"{getattr(exc, 'strerror', None) or exc}", ExitCode.FAILURE) from None
    return ExitCode.OK

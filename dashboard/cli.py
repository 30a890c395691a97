"""``judgeflow dashboard``: serve the live review page until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import sys

from dashboard.server import add_reviewer_command, prepare, serve
from streams.settings import Settings


def run(args: argparse.Namespace, settings: Settings) -> int:
    if getattr(args, "add_reviewer", None):
        return add_reviewer_command(args)
    try:
        state, tls = prepare(args, settings)
    except ValueError as exc:
        print(f"judgeflow dashboard: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(settings, state, host=args.host, port=args.port,
                          from_beginning=args.from_beginning, out=sys.stdout, tls=tls))
    except (OSError, OverflowError) as exc:
        print(f"judgeflow dashboard: cannot listen on {args.host}:{args.port}: "
              f"{getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
        return 1
    return 0

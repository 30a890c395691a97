"""``judgeflow dashboard``: serve the live review page until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from typing import TextIO

from aiohttp import web

from agents.context.charts import ChartStore
from dashboard.feed import FeedStatus, Hub, run_feed
from dashboard.security import TOKEN_ENV, AccessLogger, access_log, check_bind
from dashboard.web import State, create_app
from dashboard.window import Window
from streams.settings import Settings

log = logging.getLogger(__name__)


async def serve(settings: Settings, *, host: str, port: int, from_beginning: bool,
                window: int, token: str | None, out: TextIO,
                stop: asyncio.Event | None = None) -> None:
    state = State(Window(window), ChartStore(settings.charts_dir), Hub(), FeedStatus())
    runner = web.AppRunner(create_app(state, token), access_log_class=AccessLogger,
                           access_log=access_log, handle_signals=False)
    await runner.setup()
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    feed: asyncio.Task[None] | None = None
    try:
        site = web.TCPSite(runner, host, port)
        await site.start()  # listening first: a bind error never starts a Kafka consumer
        feed = asyncio.create_task(run_feed(settings, state.window, state.hub, state.feed,
                                            from_beginning=from_beginning))
        feed.add_done_callback(lambda _: stop.set())  # only a refused login/ACL ends it
        bound = runner.addresses[0]
        shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        print(f"judgeflow dashboard: http://{shown}:{bound[1]}/"
              f"{'  (token required)' if token else ''}", file=out, flush=True)
        await stop.wait()
    finally:
        if feed is not None:
            feed.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await feed
        await runner.cleanup()
    if feed is not None and feed.done() and not feed.cancelled() and feed.exception():
        raise feed.exception()  # type: ignore[misc]  # printed in one line by the CLI


def run(args: argparse.Namespace, settings: Settings) -> int:
    token = os.environ.get(TOKEN_ENV) or None
    try:
        check_bind(args.host, token)
        if args.window < 1:
            raise ValueError("--window must be at least 1")
    except ValueError as exc:
        print(f"judgeflow dashboard: {exc}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(settings, host=args.host, port=args.port,
                          from_beginning=args.from_beginning, window=args.window,
                          token=token, out=sys.stdout))
    except (OSError, OverflowError) as exc:
        print(f"judgeflow dashboard: cannot listen on {args.host}:{args.port}: "
              f"{getattr(exc, 'strerror', None) or exc}", file=sys.stderr)
        return 1
    return 0

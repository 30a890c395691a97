"""The live review page's server: bind, follow the topics, serve until stopped (Ctrl-C or
SIGTERM). ``judgeflow dashboard`` (``cli/dashboard.py``) parses the arguments and calls it."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from typing import TextIO

from aiohttp import web

from agents.context.charts import ChartStore
from dashboard.feed import FeedStatus, Hub, run_feed
from dashboard.security import AccessLogger, access_log
from dashboard.web import State, create_app
from dashboard.window import Window
from streams.fetch_backoff import install_idle_fetch_backoff
from streams.settings import Settings

log = logging.getLogger(__name__)


async def serve(settings: Settings, *, host: str, port: int, from_beginning: bool,
                window: int, token: str | None, out: TextIO,
                stop: asyncio.Event | None = None) -> None:
    install_idle_fetch_backoff(settings.kafka.idle_fetch_backoff_ms)
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


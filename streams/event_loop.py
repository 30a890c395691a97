"""The asyncio loop every judgeflow process runs on: ``run`` is ``asyncio.run`` with one
exception handler added (workers, the command line and the dashboard all start here).

Why: when a TLS broker (or the dashboard's client) closes a connection while data is still
in flight, CPython's ``asyncio.sslproto`` leaves an ``ssl.SSLError`` of reason
``APPLICATION_DATA_AFTER_CLOSE_NOTIFY`` in a future nobody awaits, and asyncio's default
handler then prints "Future exception was never retrieved" with a traceback at ERROR, often
after the process has already said, in its one line, why it stopped. The close had finished
and nothing was lost, so that case goes to DEBUG; every other unhandled loop exception still
reaches asyncio's default handler (where :mod:`streams.logsafety` withholds its message).
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

#: SSL reasons that only say the peer and we closed a TLS session at the same time.
CLOSING_RACES = frozenset({"APPLICATION_DATA_AFTER_CLOSE_NOTIFY"})


def is_closing_race(context: dict[str, Any]) -> bool:
    exc = context.get("exception")
    return isinstance(exc, ssl.SSLError) and exc.reason in CLOSING_RACES


def handle_exception(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    if is_closing_race(context):
        log.debug("TLS connection closed while the peer was still sending (harmless): %s",
                  context.get("message", ""))
        return
    loop.default_exception_handler(context)


def prepared(loop: asyncio.AbstractEventLoop) -> asyncio.AbstractEventLoop:
    """``loop`` with judgeflow's exception handler (also for loops Faust creates)."""
    loop.set_exception_handler(handle_exception)
    return loop


def run(main: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(main)`` on a loop made by :func:`prepared`."""
    with asyncio.Runner(loop_factory=lambda: prepared(asyncio.new_event_loop())) as runner:
        return runner.run(main)

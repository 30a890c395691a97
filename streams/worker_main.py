"""The one start-up of every worker process: signals, metrics endpoint and exit statuses.

``judgeflow worker NAME`` calls a worker's ``run_worker(settings)``, which hands its
``serve(metrics, stop)`` coroutine to :func:`run_worker`. SIGTERM and SIGINT set ``stop``
(the worker then finishes in-flight work, commits and leaves its group). A worker that
cannot start for a reason the operator must fix (``cannot_start``: a skill folder, a model,
credentials) raises :class:`CommandError`: one ``judgeflow:`` line on stderr at any log level,
exit :attr:`ExitCode.CANNOT_START`. Any other failure is logged by type only at ERROR (an
exception message may quote input: PHI), with the traceback at DEBUG, and exits
:attr:`ExitCode.FAILURE`. Kafka and settings errors, and a metrics address that cannot be
bound (a ``CommandError``), go on up to the command line, which prints them in one line
(``cli/errors.py``, the one map from errors to exit statuses). docs/operations.md lists the
statuses under "Exit statuses".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Callable
from typing import NoReturn, Protocol

from aiokafka.errors import KafkaError

from schemas.skill import SkillError
from streams import event_loop
from streams.errors import StreamsError
from streams.exit_codes import CommandError, ExitCode
from streams.metrics import Metrics
from streams.settings import Settings

log = logging.getLogger(__name__)


Serve = Callable[[Metrics, asyncio.Event], Awaitable[None]]


def guarded(name: str, body: Callable[[], object],
            cannot_start: tuple[type[Exception], ...] = ()) -> ExitCode:
    """Run ``body`` and map how it ended to an exit status (see the module doc)."""
    fatal: tuple[type[Exception], ...] = (SkillError, *cannot_start)
    try:
        body()
    except fatal as exc:
        # to the command line's one error map: one `judgeflow:` line on stderr whatever the
        # log level (at CRITICAL an ERROR record was the only word, and it was dropped)
        raise CommandError(f"{name} worker cannot start: {exc}", ExitCode.CANNOT_START
                           ) from None
    except (StreamsError, KafkaError, CommandError):
        raise  # the command line prints these in one line (a metrics address: CommandError)
    except Exception as exc:
        log.error("%s worker failed: %s", name, type(exc).__name__)
        log.debug("%s worker failure traceback", name, exc_info=True)
        return ExitCode.FAILURE
    return ExitCode.OK


def exit_now(line: str, code: int = ExitCode.FAILURE,
             logger: logging.Logger = log) -> NoReturn:
    """End the process at once with one CRITICAL line: from a callback or timer that must
    not let the worker go on (an unpublished output, a dead or stuck group membership), where
    raising would be caught by Faust or asyncio and the worker would stay alive. ``logger``:
    the caller's, so the line names where it was decided."""
    logger.critical("%s", line)
    for handler in logging.getLogger().handlers:
        handler.flush()
    os._exit(code)


def run_worker(name: str, settings: Settings, serve: Serve,
               cannot_start: tuple[type[Exception], ...] = ()) -> ExitCode:
    """Serve the worker's metrics, run ``serve(metrics, stop)`` until it returns (``stop`` is
    set on SIGTERM/SIGINT), and return its exit status."""
    metrics = Metrics.create()
    metrics.serve(settings.metrics_port, settings.metrics_host)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        await serve(metrics, stop)

    return guarded(name, lambda: event_loop.run(main()), cannot_start)


class Stoppable(Protocol):
    async def run(self) -> None: ...

    def stop(self) -> None: ...


async def serve_until(worker: Stoppable, stop: asyncio.Event | None) -> None:
    """Run ``worker`` until it returns, stopping it once ``stop`` is set."""
    watcher = stop_when(stop, worker.stop)
    try:
        await worker.run()
    finally:
        if watcher is not None:
            watcher.cancel()


def stop_when(stop: asyncio.Event | None, action: Callable[[], None]) -> asyncio.Task[None] | None:
    """Call ``action`` (a worker's ``stop``) once ``stop`` is set; None without an event."""
    if stop is None:
        return None

    async def wait() -> None:
        await stop.wait()
        action()
    return asyncio.get_running_loop().create_task(wait())

"""An unretrieved TLS closing race is DEBUG noise; every other loop exception still reaches
asyncio's own handler at ERROR."""

from __future__ import annotations

import asyncio
import gc
import logging
import ssl

import pytest

from streams import event_loop


def closing_race() -> ssl.SSLError:
    exc = ssl.SSLError(1, "[SSL: APPLICATION_DATA_AFTER_CLOSE_NOTIFY] application data after "
                          "close notify (_ssl.c:2706)")
    exc.reason = "APPLICATION_DATA_AFTER_CLOSE_NOTIFY"
    return exc


async def leave_unretrieved(exc: BaseException) -> None:
    """A future holding ``exc`` that nobody awaits: asyncio reports it when collected."""
    fut = asyncio.get_running_loop().create_future()
    fut.set_exception(exc)
    del fut
    gc.collect()


@pytest.mark.parametrize(("exc", "reported"), [
    (closing_race(), False),
    (ssl.SSLError(1, "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed"), True),
    (RuntimeError("boom"), True),
])
def test_only_the_closing_race_is_quieted(caplog: pytest.LogCaptureFixture,
                                          exc: BaseException, reported: bool) -> None:
    caplog.set_level(logging.DEBUG)
    event_loop.run(leave_unretrieved(exc))
    # only the records of this future (gc.collect may also collect another test's leftovers)
    mark = str(exc.args[-1])[:40]  # in the future's repr that asyncio logs
    errors = [r for r in caplog.records if r.name == "asyncio" and r.levelno >= logging.ERROR
              and mark in r.getMessage()]
    assert bool(errors) is reported
    if not reported:
        assert any(r.name == "streams.event_loop" and r.levelno == logging.DEBUG
                   for r in caplog.records)


def test_plain_asyncio_run_reports_the_race(caplog: pytest.LogCaptureFixture) -> None:
    """The case the handler exists for: without it, asyncio logs a traceback at ERROR."""
    caplog.set_level(logging.DEBUG)
    asyncio.run(leave_unretrieved(closing_race()))
    assert any(r.name == "asyncio" and r.levelno >= logging.ERROR for r in caplog.records)


def test_run_returns_the_result() -> None:
    async def answer() -> int:
        return 42
    assert event_loop.run(answer()) == 42

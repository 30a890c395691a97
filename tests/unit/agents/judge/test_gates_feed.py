"""The judge's gate answer follower never stops silently (issue 25): a failure after the
start is logged at ERROR and the topics are read again; one before it stops the start."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from agents.judge import gates_feed
from agents.settings import Settings


async def test_a_follower_failing_after_the_start_is_logged_and_restarted(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    calls: list[int] = []
    again = asyncio.Event()

    async def follow(settings: Any, store: Any, ready: asyncio.Event | None = None) -> None:
        calls.append(1)
        assert ready is not None
        if len(calls) == 1:
            ready.set()
            raise TypeError("can't compare offset-naive and offset-aware datetimes")
        again.set()
        await asyncio.Event().wait()

    monkeypatch.setattr(gates_feed, "follow_outcomes", follow)
    ready = asyncio.Event()
    with caplog.at_level(logging.ERROR, logger=gates_feed.__name__):
        task = asyncio.create_task(gates_feed.keep_following(Settings(), Any, ready,
                                                             pause=0.0))
        await asyncio.wait_for(again.wait(), 5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    assert len(calls) == 2
    assert any("gate answer follower failed (TypeError)" in r.getMessage()
               for r in caplog.records)
    assert all("naive" not in r.getMessage() for r in caplog.records)  # type, not text


async def test_a_follower_failing_before_the_start_stops_the_start(
        monkeypatch: pytest.MonkeyPatch) -> None:
    async def follow(settings: Any, store: Any, ready: asyncio.Event | None = None) -> None:
        raise ConnectionError("broker gone")

    monkeypatch.setattr(gates_feed, "follow_outcomes", follow)
    with pytest.raises(ConnectionError):
        await gates_feed.keep_following(Settings(), Any, asyncio.Event(), pause=0.0)

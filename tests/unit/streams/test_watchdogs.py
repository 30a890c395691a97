"""A worker that cannot go on exits non-zero (its supervisor restarts it) instead of staying
alive consuming nothing: its group membership died for good, its join never finishes, or an
output was refused (then before the input's offset is committed)."""

from __future__ import annotations

import asyncio
import logging
import os
from types import SimpleNamespace
from typing import Any

import pytest

from streams import watchdogs
from streams.exit_codes import ExitCode
from streams.group_join import membership_error


def coordinator(task: str, closing: bool = False) -> tuple[Any, asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    fut: asyncio.Future[None] = loop.create_future()
    if task == "died":
        fut.set_exception(ValueError("unpack requires a buffer of 2 bytes"))
    elif task == "returned":
        fut.set_result(None)
    elif task == "cancelled":
        fut.cancel()
    done: asyncio.Future[None] = loop.create_future()
    if closing:
        done.set_result(None)
    return SimpleNamespace(_coordinator=SimpleNamespace(_coordination_task=fut,
                                                        _closing=done)), loop


@pytest.mark.parametrize(("task", "closing", "lost"), [
    ("running", False, None),
    ("died", False, "ValueError"),       # the coordinator routine raised: no member any more
    ("returned", False, "RuntimeError"),  # ended without a stop: no member either
    ("returned", True, None),            # a stop
    ("died", True, None),                # an error while stopping is the stop's business
    ("cancelled", False, None),
])
def test_membership_error(task: str, closing: bool, lost: str | None) -> None:
    consumer, loop = coordinator(task, closing)
    try:
        exc = membership_error(consumer)
    finally:
        loop.close()
    assert (type(exc).__name__ if exc is not None else None) == lost


def test_no_consumer_or_no_group_is_not_a_loss() -> None:
    assert membership_error(None) is None
    assert membership_error(SimpleNamespace(_coordinator=SimpleNamespace())) is None


@pytest.mark.parametrize("task", ["running", "died"])
def test_worker_exits_once_membership_is_lost(monkeypatch: pytest.MonkeyPatch,
                                              caplog: pytest.LogCaptureFixture,
                                              task: str) -> None:
    codes: list[int] = []
    monkeypatch.setattr(os, "_exit", codes.append)
    consumer, loop = coordinator(task)
    fake_app = SimpleNamespace(consumer=SimpleNamespace(_thread=SimpleNamespace(
        _consumer=consumer)), conf=SimpleNamespace(id="g-detect"))
    try:
        with caplog.at_level(logging.INFO, logger="streams.watchdogs"):
            watchdogs.exit_if_membership_lost(fake_app)
    finally:
        loop.close()
    assert codes == ([ExitCode.FAILURE] if task == "died" else [])
    lines = [r for r in caplog.records if r.name == "streams.watchdogs"]
    assert len(lines) == (1 if task == "died" else 0)
    if lines:
        assert lines[0].levelno == logging.CRITICAL
        text = lines[0].getMessage()
        assert "g-detect" in text and "ValueError" in text and "unpack" not in text


def test_a_join_that_never_finishes_exits_past_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    codes: list[int] = []
    monkeypatch.setattr(os, "_exit", codes.append)
    watch = watchdogs.JoinWatch(limit=70.0)
    conf = SimpleNamespace(id="g-detect")
    never = SimpleNamespace(consumer_generation_id=0, rebalancing=False, conf=conf)
    watch.check(never, 0.0)
    watch.check(never, 70.0)
    assert codes == []
    watch.check(never, 71.0)
    assert codes == [ExitCode.FAILURE]
    # assigned and done: the clock starts again; reading changelogs does not count
    codes.clear()
    done = SimpleNamespace(consumer_generation_id=3, rebalancing=False, conf=conf)
    recovering = SimpleNamespace(consumer_generation_id=3, rebalancing=True, in_recovery=True,
                                 conf=conf)
    stuck = SimpleNamespace(consumer_generation_id=3, rebalancing=True, in_recovery=False,
                            conf=conf)
    for t, state in [(100.0, done), (101.0, recovering), (500.0, recovering), (501.0, stuck),
                     (570.0, stuck), (571.0, done), (600.0, stuck)]:
        watch.check(state, t)
    assert codes == []
    watch.check(stuck, 671.0)
    assert codes == [ExitCode.FAILURE]


@pytest.mark.parametrize(("outcome", "exits"), [("ok", False), ("error", True),
                                                ("cancel", False)])
def test_failed_output_exits_before_commit(monkeypatch: pytest.MonkeyPatch, outcome: str,
                                           exits: bool) -> None:
    codes: list[int] = []
    monkeypatch.setattr(os, "_exit", codes.append)
    loop = asyncio.new_event_loop()
    try:
        fut: asyncio.Future[int] = loop.create_future()
        if outcome == "ok":
            fut.set_result(1)
        elif outcome == "error":
            fut.set_exception(ConnectionError("broker gone"))
        else:
            fut.cancel()
        watchdogs.exit_if_unpublished(fut)
    finally:
        loop.close()
    assert codes == ([watchdogs.EXIT_UNPUBLISHED] if exits else [])


def test_a_batch_not_handed_over_exits_with_one_line(monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    codes: list[int] = []
    monkeypatch.setattr(os, "_exit", codes.append)
    with caplog.at_level(logging.CRITICAL):
        watchdogs.exit_unhanded(RuntimeError("accumulator closed; key P001|x"))
    assert codes == [watchdogs.EXIT_UNPUBLISHED]
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.CRITICAL]
    assert lines == ["a batch's outputs could not be handed to the producer (RuntimeError); "
                     "exiting so that its inputs are redelivered"]  # the type only: no PHI

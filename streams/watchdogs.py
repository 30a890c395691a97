"""Faust commits past a failed send; aiokafka's group task dies silently: exit at once instead.

A Faust worker that cannot go on exits at once, with one CRITICAL line and a non-zero
status, so that its supervisor starts a fresh one: its group membership died for good, its
group join never finishes, or the broker refused an output it sent (the input is then left
uncommitted and is redelivered). Every such exit goes through ``worker_main.exit_now``.

:mod:`streams.app` runs the membership checks on a timer of every worker; the detect edge
watches its outputs here. The detect-only stall exit is :mod:`streams.detect.stall`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, cast

from streams.group_join import membership_error
from streams.worker_main import ExitCode, exit_now

log = logging.getLogger(__name__)
#: Exit status when an output could not be published (EX_SOFTWARE).
EXIT_UNPUBLISHED = ExitCode.UNPUBLISHED


class JoinWatch:
    """A worker stuck joining its group (never assigned, or in a rebalance that does not end)
    consumes nothing: seen on the embedded broker with two workers starting together, where
    the first member's commit was refused with IllegalGeneration and neither member was
    assigned again. Past the broker's rebalance timeout (plus two sessions) such a join will
    not finish; the worker exits non-zero with one line so that it is restarted. Reading the
    changelogs (recovery) does not count: a large table legitimately takes long."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self.since: float | None = None

    def check(self, app: Any, now: float) -> None:
        joining = (not getattr(app, "consumer_generation_id", 0)
                   or (app.rebalancing and not getattr(app, "in_recovery", False)))
        if not joining:
            self.since = None
            return
        if self.since is None:
            self.since = now
        if now - self.since <= self.limit:
            return
        exit_now(f"group {app.conf.id}: this worker has not completed a group join for "
                 f"{now - self.since:.0f} s (more than the rebalance timeout); exiting so "
                 "that it is restarted", logger=log)


def exit_if_membership_lost(app: Any) -> None:
    """A worker whose group membership died for good consumes nothing while it stays alive:
    it exits non-zero with one line instead, and its supervisor starts a fresh member."""
    thread = getattr(app.consumer, "_thread", None)  # Faust's aiokafka consumer thread
    exc = membership_error(getattr(thread, "_consumer", None))
    if exc is None:
        return
    exit_now(f"group {app.conf.id}: this worker's group membership ended for good "
             f"({type(exc).__name__}); exiting so that it is restarted", logger=log)


def watch_changelog(table: Any) -> None:
    """Table writes are sends to the changelog: watch them like every other output."""
    send = table.send_changelog

    def send_changelog(*args: Any, **kwargs: Any) -> Any:
        fut = send(*args, **kwargs)
        watch_sent(fut)
        return fut

    table.send_changelog = send_changelog


def watch_sent(sent: Any) -> None:
    """``sent`` is Faust's FutureMessage (an asyncio future) for one output."""
    cast("asyncio.Future[Any]", sent).add_done_callback(exit_if_unpublished)


def exit_if_unpublished(fut: Any) -> None:
    """An output the broker would not take must not be followed by an offset commit.

    Faust flushes the producer before committing but commits even when a message failed, so
    a failed output would be lost. Exiting at once (the callback runs before the flush
    returns) leaves the input uncommitted; the restarted worker re-sends the same outputs.
    """
    if fut.cancelled() or fut.exception() is None:
        return
    exit_now(f"an output could not be published ({type(fut.exception()).__name__}); exiting "
             "so that its input is redelivered", EXIT_UNPUBLISHED, logger=log)


def exit_unhanded(exc: BaseException) -> None:
    """Records of a batch could not all be handed to the producer. Raising would crash the
    Faust agent, which acks the batch's events as it goes, so the next commit would move
    past inputs whose outputs never left: exit at once instead (the inputs are redelivered
    and decided again with the same ids)."""
    exit_now(f"a batch's outputs could not be handed to the producer "
             f"({type(exc).__name__}); exiting so that its inputs are redelivered",
             EXIT_UNPUBLISHED, logger=log)

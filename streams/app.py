"""Faust app factory. No import-time global app: ``base_app(settings, ...)`` builds one per
worker process (detect: :mod:`streams.detect.run`; the detect benchmark's passthrough). The
broker address and credentials come from the one client factory, :mod:`streams.kafka_clients`
(await its ``connect`` before the app starts)."""

from __future__ import annotations

import logging
import time
from typing import Any

import faust

from streams.group_join import membership_error
from streams.kafka_clients import faust_app
from streams.member_eviction import client_id
from streams.settings import Settings
from streams.worker_main import exit_now

log = logging.getLogger(__name__)
#: How often a worker checks that it is still a member of its consumer group.
MEMBERSHIP_CHECK_SECONDS = 2.0


def base_app(settings: Settings, app_id: str, partitions: int) -> faust.App:
    """A Faust app wired to our settings: no web server, state under ``state_dir``."""
    k = settings.kafka
    app = faust_app(
        k, app_id,
        store="memory://",  # tables are rebuilt from their changelog topics on start
        topic_partitions=partitions,
        topic_replication_factor=k.replication_factor,
        datadir=str(settings.state_dir / app_id),
        web_enabled=False,
        autodiscover=False,
        table_standby_replicas=0,
        consumer_auto_offset_reset="earliest",
        broker_session_timeout=k.session_timeout_seconds,
        broker_heartbeat_interval=k.heartbeat_interval_seconds,
        broker_commit_interval=k.commit_interval_seconds,
        broker_client_id=client_id(app_id),
        producer_acks=-1,
        producer_linger_ms=k.producer_linger_ms,
    )

    watch = JoinWatch(float(app.conf.broker_rebalance_timeout) + 2 * k.session_timeout_seconds)

    @app.timer(interval=MEMBERSHIP_CHECK_SECONDS)
    async def group_membership() -> None:
        exit_if_membership_lost(app)
        watch.check(app, time.monotonic())

    return app


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



"""Faust app factory. No import-time global app: ``base_app(settings, ...)`` builds one per
worker process (detect: :mod:`streams.detect.run`; the detect benchmark's passthrough). The
broker address and credentials come from the one client factory, :mod:`streams.kafka_clients`
(await its ``connect`` before the app starts)."""

from __future__ import annotations

import time

import faust

from streams.kafka_clients import client_id, faust_app
from streams.settings import Settings
from streams.watchdogs import JoinWatch, exit_if_membership_lost

#: How often a worker checks that it is still a member of its consumer group.
MEMBERSHIP_CHECK_SECONDS = 2.0


def base_app(settings: Settings, app_id: str, partitions: int) -> faust.App:
    """A Faust app wired to our settings: no web server, state under ``state_dir``; a timer
    ends the worker when its group membership is lost or its join never finishes
    (:mod:`streams.watchdogs`)."""
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

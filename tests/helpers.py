"""Test helpers: settings for a test, worker subprocesses that never outlive a test, and
small Kafka produce/collect utilities against the real embedded broker."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from agents.settings import Settings
from streams import kafka_clients
from streams.kafka_clients import KafkaTarget
from streams.settings import TopicSettings
from streams.topics import assign_all, send_all
from tests.kafka import CLIENT_SETTINGS
from tools.subproc import WorkerProcess, settings_env

__all__ = ["WorkerProcess", "collect", "produce", "settings_env", "test_settings", "unique",
           "values", "worker"]

REPO = Path(__file__).resolve().parents[1]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def test_settings(bootstrap: str, **overrides: Any) -> Settings:
    """Settings with per-test topic and group names and a fast settle window (and the
    embedded broker's work-around settings, see :mod:`tests.kafka`)."""
    tag = uuid.uuid4().hex[:8]
    topics = {name: f"t{tag}.{value}" for name, value in TopicSettings().model_dump().items()}
    groups = {"detect": f"g{tag}-detect", "judge": f"g{tag}-judge",
              "debrief": f"g{tag}-debrief", "calibrate": f"g{tag}-calibrate"}
    base: dict[str, Any] = {
        "kafka": {"bootstrap_servers": bootstrap, "partitions": 3,
                  "session_timeout_seconds": 6.0, "heartbeat_interval_seconds": 1.0,
                  "commit_interval_seconds": 0.5, **CLIENT_SETTINGS},
        "topics": topics, "groups": groups, "settle_seconds": 3.0,
        "state_dir": Path(os.environ.get("TMPDIR", "/tmp")) / f"judgeflow-state-{tag}",
        "log_level": "INFO",
        # no blind or double-review cells unless a test asks for them (the audit picks
        # cells by key hash: a test's fixed keys would otherwise be blind by chance)
        "review": {"blind_share": 0.0, "double_share": 0.0},
    }
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    return Settings(**base)


test_settings.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


@contextlib.contextmanager
def worker(name: str, settings: Settings, tmp_path: Path, tag: str = "",
           extra_env: Mapping[str, str] | None = None) -> Iterator[WorkerProcess]:
    proc = WorkerProcess(name, settings, tmp_path / f"{name}{tag}.log", extra_env)
    try:
        yield proc
    finally:
        proc.kill()


#: Tests produce exactly as the benchmark does.
produce = send_all


async def collect(bootstrap: KafkaTarget, topic: str, *, until: int | None = None,
                  timeout: float = 60.0, quiet: float = 2.0,
                  done: Callable[[list[Any]], bool] | None = None) -> list[Any]:
    """All records of ``topic`` from the beginning: stops when ``until`` records arrived or
    ``done(records)`` is true (then waits ``quiet`` seconds more for extras) or at
    ``timeout``."""
    consumer = kafka_clients.consumer(bootstrap, enable_auto_commit=False)
    await consumer.start()
    records: list[Any] = []
    try:
        deadline = time.monotonic() + timeout
        tps = await assign_all(consumer, [topic], wait=timeout)
        if not tps:
            return records
        await consumer.seek_to_beginning(*tps)
        quiet_until: float | None = None
        while time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=200)
            for recs in batch.values():
                records.extend(recs)
            finished = (until is not None and len(records) >= until) or (
                done is not None and done(records))
            if finished and quiet_until is None:
                quiet_until = time.monotonic() + quiet
            if quiet_until is not None and time.monotonic() >= quiet_until:
                break
    finally:
        await consumer.stop()
    return records


def values(records: Sequence[Any]) -> list[Any]:
    return [orjson.loads(r.value) for r in records]


async def committed_offsets(bootstrap: KafkaTarget, group: str, topic: str) -> dict[int, int]:
    """The group's committed offset per partition of ``topic`` (partitions without one
    left out)."""
    admin = kafka_clients.admin(bootstrap)
    await admin.start()
    try:
        offsets = await admin.list_consumer_group_offsets(group)
    finally:
        await admin.close()
    return {tp.partition: meta.offset for tp, meta in offsets.items()
            if tp.topic == topic and meta.offset >= 0}


async def end_offsets(bootstrap: KafkaTarget, topic: str) -> dict[int, int]:
    consumer = kafka_clients.consumer(bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        tps = await assign_all(consumer, [topic], wait=10)
        ends = await consumer.end_offsets(tps)
    finally:
        await consumer.stop()
    return {tp.partition: off for tp, off in ends.items()}


async def wait_committed(bootstrap: KafkaTarget, group: str, topic: str,
                         timeout: float = 60.0) -> dict[int, int]:
    """Wait until ``group`` has committed the end of every non-empty partition of ``topic``;
    returns the last committed offsets seen (the caller asserts)."""
    ends = {p: e for p, e in (await end_offsets(bootstrap, topic)).items() if e > 0}
    deadline = time.monotonic() + timeout
    got: dict[int, int] = {}
    while time.monotonic() < deadline:
        got = await committed_offsets(bootstrap, group, topic)
        if all(got.get(p) == e for p, e in ends.items()):
            break
        await asyncio.sleep(0.3)
    return got


def label_of(version: str) -> str:
    """``judge-v3`` of ``judge-v3+4f0c9a1be27d`` (the whole string for older versions)."""
    return version.split("+", 1)[0]


def own_records(records: Sequence[logging.LogRecord]) -> list[logging.LogRecord]:
    """``records`` without the one neighbour a test cannot prevent: the asyncio ERROR of an
    Anthropic SDK client another test dropped open, collected during this test (the SDK's
    finaliser schedules its close on whatever event loop is running, and it fails there).
    Assertions that nothing went wrong are about the code under test."""
    return [r for r in records
            if not (r.name == "asyncio" and "AsyncClient.aclose" in r.getMessage())]

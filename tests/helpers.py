"""Test helpers: settings for a test, worker subprocesses that never outlive a test, and
small Kafka produce/collect utilities against the real embedded broker."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from streams.settings import Settings, TopicSettings

REPO = Path(__file__).resolve().parents[1]


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def test_settings(bootstrap: str, **overrides: Any) -> Settings:
    """Settings with per-test topic and group names and a fast settle window."""
    tag = uuid.uuid4().hex[:8]
    topics = {name: f"t{tag}.{value}" for name, value in TopicSettings().model_dump().items()}
    groups = {"detect": f"g{tag}-detect", "judge": f"g{tag}-judge",
              "debrief": f"g{tag}-debrief", "calibrate": f"g{tag}-calibrate"}
    base: dict[str, Any] = {
        "kafka": {"bootstrap_servers": bootstrap, "idle_fetch_backoff_ms": 20, "partitions": 3,
                  "session_timeout_seconds": 6.0, "heartbeat_interval_seconds": 1.0,
                  "commit_interval_seconds": 0.5},
        "topics": topics, "groups": groups, "settle_seconds": 3.0,
        "state_dir": Path(os.environ.get("TMPDIR", "/tmp")) / f"judgeflow-state-{tag}",
        "log_level": "INFO",
    }
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    return Settings(**base)


def settings_env(settings: Settings) -> dict[str, str]:
    """The JUDGEFLOW_* environment that reproduces ``settings`` in a subprocess."""
    env: dict[str, str] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping):
            if prefix.endswith("PRICES"):
                env[prefix] = orjson.dumps(value).decode()
                return
            for k, v in value.items():
                walk(f"{prefix}__{k.upper()}" if prefix else k.upper(), v)
        elif isinstance(value, list | tuple):
            env[prefix] = ",".join(str(v) for v in value)
        elif value is not None:
            env[prefix] = str(value)

    walk("", settings.model_dump(mode="json"))
    return {f"JUDGEFLOW_{k}": v for k, v in env.items()}


class WorkerProcess:
    """``judgeflow worker NAME`` in a subprocess; killed (whole group) when the test ends."""

    def __init__(self, name: str, settings: Settings, log_path: Path,
                 extra_env: Mapping[str, str] | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGEFLOW_")}
        env.update(settings_env(settings))
        env.update(extra_env or {})
        self.log_path = log_path
        self._log = open(log_path, "ab")  # noqa: SIM115
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "streams.cli.main", "worker", name], cwd=REPO, env=env,
            stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, sig)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self._log.close()

    def stop(self) -> None:
        self.kill(signal.SIGTERM)

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")


@contextlib.contextmanager
def worker(name: str, settings: Settings, tmp_path: Path, tag: str = "",
           extra_env: Mapping[str, str] | None = None) -> Iterator[WorkerProcess]:
    proc = WorkerProcess(name, settings, tmp_path / f"{name}{tag}.log", extra_env)
    try:
        yield proc
    finally:
        proc.kill()


async def produce(bootstrap: str, topic: str, records: Sequence[tuple[bytes | None, bytes]]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    await producer.start()
    try:
        futures = [await producer.send(topic, value=v, key=k) for k, v in records]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def collect(bootstrap: str, topic: str, *, until: int | None = None,
                  timeout: float = 60.0, quiet: float = 2.0) -> list[Any]:
    """All records of ``topic`` from the beginning: stops when ``until`` records arrived
    (then waits ``quiet`` seconds more for extras) or at ``timeout``."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    records: list[Any] = []
    try:
        deadline = time.monotonic() + timeout
        parts: set[int] = set()
        while not parts and time.monotonic() < deadline:
            await consumer._client.force_metadata_update()
            parts = consumer.partitions_for_topic(topic) or set()
            if not parts:
                await asyncio.sleep(0.2)
        tps = [TopicPartition(topic, p) for p in parts]
        if not tps:
            return records
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        quiet_until: float | None = None
        while time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=200)
            for recs in batch.values():
                records.extend(recs)
            if until is not None and len(records) >= until and quiet_until is None:
                quiet_until = time.monotonic() + quiet
            if quiet_until is not None and time.monotonic() >= quiet_until:
                break
    finally:
        await consumer.stop()
    return records


def values(records: Sequence[Any]) -> list[Any]:
    return [orjson.loads(r.value) for r in records]

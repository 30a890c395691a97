"""``judgeflow bench detect``: detector throughput against a plain aiokafka passthrough.

Both runs read the same N pre-loaded answers from the same broker and write to a fresh
output topic. Throughput is measured from the broker-side timestamps of the outputs
(first to last), so start-up and group joins are excluded from both alike:

* passthrough: one aiokafka consumer + producer copying every record (the floor for any
  consume-and-produce processor on this broker and client);
* detect: the real ``judgeflow worker detect`` process (Faust, table writes to the changelog,
  outcomes and jobs) deciding N/2 cells of two agents each.
"""

from __future__ import annotations

import asyncio
import logging
import random
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import orjson

from schemas.skill import load_skill
from streams import kafka_clients
from streams.settings import Settings, TopicSettings
from streams.topics import assign_all, send_all
from tools.subproc import WorkerProcess

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BenchResult:
    events: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else float("inf")


def synthetic_answers(settings: Settings, n: int, seed: int = 7) -> list[tuple[bytes, bytes]]:
    """n answers: n/2 cells x 2 agents; ~70% agree, the rest split over the job kinds."""
    skill = load_skill(settings.skill_dir)
    fields = [c for c in skill.criteria.values() if c.answer_schema.type == "boolean"]
    rng = random.Random(seed)
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    out: list[tuple[bytes, bytes]] = []
    for i in range(n // 2):
        crit = fields[i % len(fields)]
        pid = f"B{i // len(fields):06d}"
        roll = rng.random()
        a, b = True, True if roll < 0.8 else (False if roll < 0.9 else "yes")
        conf_b = "low" if 0.7 < roll < 0.8 else "high"
        for agent, answer, conf in (("default", a, "high"), ("skeptical", b, conf_b)):
            rec = {"event_id": f"bench-{i}-{agent}", "run_id": f"run-{agent}",
                   "task_id": "bench", "patient_id": pid, "field_id": crit.field_id,
                   "agent_id": agent, "answer": answer, "confidence": conf,
                   "emitted_at": (t0 + timedelta(seconds=i)).isoformat()}
            out.append((f"bench|{pid}|{crit.field_id}".encode(), orjson.dumps(rec)))
    return out


async def output_span(kafka: kafka_clients.KafkaTarget, topic: str, expected: int, timeout: float,
                      skip: int = 0) -> float:
    """Seconds between the ``skip``-th and the ``expected``-th record's broker timestamp
    (``skip`` leaves out warm-up outputs)."""
    consumer = kafka_clients.consumer(kafka, enable_auto_commit=False)
    await consumer.start()
    stamps: list[int] = []
    try:
        deadline = time.monotonic() + timeout
        tps = await assign_all(consumer, [topic], wait=timeout)
        if not tps:
            raise TimeoutError(f"{topic} never appeared")
        await consumer.seek_to_beginning(*tps)
        while len(stamps) < expected:
            if time.monotonic() > deadline:
                raise TimeoutError(f"only {len(stamps)}/{expected} records on {topic}")
            batch = await consumer.getmany(timeout_ms=200, max_records=5000)
            stamps += [r.timestamp for rs in batch.values() for r in rs]
    finally:
        await consumer.stop()
    stamps.sort()
    return max((stamps[expected - 1] - stamps[skip]) / 1000.0, 1e-3)


async def passthrough(settings: Settings, source: str, sink: str, n: int) -> BenchResult:
    bs = settings.kafka
    consumer = kafka_clients.consumer(bs, source, group_id=f"{sink}-group",
                                      enable_auto_commit=False, auto_offset_reset="earliest")
    producer = kafka_clients.producer(bs, acks="all", enable_idempotence=True, linger_ms=5)
    await consumer.start()
    await producer.start()
    seen = 0
    try:
        while seen < n:
            batch = await consumer.getmany(timeout_ms=500, max_records=2000)
            futures = [await producer.send(sink, value=r.value, key=r.key)
                       for rs in batch.values() for r in rs]
            await asyncio.gather(*futures)
            if futures:
                await consumer.commit()
            seen += len(futures)
    finally:
        await consumer.stop()
        await producer.stop()
    return BenchResult(n, await output_span(bs, sink, n, timeout=60))


def run_worker_until(settings: Settings, n: int, outputs_topic: str, timeout: float,
                     module_args: Sequence[str] | None = None,
                     outputs: int | None = None, *, processes: int = 1,
                     live: Sequence[tuple[bytes, bytes]] = (),
                     warm_outputs: int = 0) -> BenchResult:
    """Run ``processes`` worker processes (default ``judgeflow worker detect``) until
    ``outputs`` records (default n/2 cell outcomes) are on ``outputs_topic``; measure their
    span. ``live``: records produced only once the workers run (live arrival); the first
    cell is sent alone and waited for (the workers have joined), and its ``warm_outputs``
    outputs are left out of the span."""
    log_dir = Path(tempfile.mkdtemp(prefix="judgeflow-bench-"))
    bs = settings.kafka
    procs = [WorkerProcess("detect", settings, log_dir / f"worker{i}.log",
                           module_args=module_args) for i in range(processes)]
    try:
        if live:
            asyncio.run(send_all(bs, settings.topics.agent_answers, live[:2]))
            asyncio.run(output_span(bs, outputs_topic, warm_outputs, timeout))
            asyncio.run(send_all(bs, settings.topics.agent_answers, live[2:]))
        span = asyncio.run(output_span(bs, outputs_topic, outputs or n // 2, timeout,
                                       skip=warm_outputs))
    except TimeoutError as exc:
        raise RuntimeError(f"{exc}; worker logs: {log_dir}") from None
    finally:
        for proc in procs:
            proc.stop()
    return BenchResult(n, span)


async def create_topic(kafka: kafka_clients.KafkaTarget, name: str, partitions: int) -> None:
    """Create one topic the way a producer's auto-creation would (before any worker)."""
    from aiokafka.admin import NewTopic

    admin = kafka_clients.admin(kafka)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name=name, num_partitions=partitions,
                                            replication_factor=1)])
    finally:
        await admin.close()


async def drop_topics(kafka: kafka_clients.KafkaTarget, prefix: str,
                      keep: Sequence[str] = ()) -> None:
    """Delete a finished run's topics (names starting with ``prefix``, but ``keep``), so the
    next run meets the broker as this one did: the embedded broker rewrites its one data file,
    with everything it stores, about once a second while records arrive, so each run would
    pay for every earlier run's data (a run after 100 MB of earlier phases: its broker CPU
    doubled). Best effort: a broker that refuses leaves them (one line says so)."""
    from aiokafka.errors import KafkaError

    admin = kafka_clients.admin(kafka)
    await admin.start()
    try:
        names = [t for t in await admin.list_topics() if t.startswith(prefix) and t not in keep]
        if names:
            await admin.delete_topics(names)
    except KafkaError as exc:
        print(f"  (could not delete the finished run's topics: {type(exc).__name__})", flush=True)
    finally:
        await admin.close()


def bench_topics(tag: str) -> TopicSettings:
    return TopicSettings(**{k: f"bench{tag}.{v}" for k, v in TopicSettings().model_dump().items()})

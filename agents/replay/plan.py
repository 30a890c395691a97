"""Where a replay of an input topic starts and ends, and its consumer group (pure parsing +
one Kafka step).

A replay runs as its own consumer group, named after the worker, the prompt version and
the filters (``judgeflow-replay.judge.judge-v3+4f0c9a1be27d``): the first run starts at
the beginning of the topic, at ``--since TIME`` or at ``--from-offsets P:O,...`` and commits
that start for the group; a later run of the same version resumes from the group's
committed offsets (the start options are then ignored, and said so). A run ends at the end
offsets the topic had when it started; records that arrive later are for the live worker.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiokafka import TopicPartition

from schemas.ids import derive_id
from streams import kafka_clients
from streams.errors import StreamsError
from streams.settings import Settings
from streams.topics import assign_all


def group_name(worker: str, version: str, filters: dict[str, str | None]) -> str:
    """One group per (worker, prompt version, filter set): a filtered replay does not mark
    the records it filtered out as done for an unfiltered one."""
    used = sorted((k, v) for k, v in filters.items() if v)
    tail = "" if not used else "." + derive_id(repr(used), length=8)
    return f"judgeflow-replay.{worker}.{version}{tail}"


def parse_since(text: str) -> datetime:
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise StreamsError(f"--since {text!r}: expected an ISO time such as "
                           "2026-11-30T08:00:00Z or 2026-11-30") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def parse_offsets(text: str) -> dict[int, int]:
    out: dict[int, int] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        p, sep, o = part.partition(":")
        if not sep or not p.isdigit() or not o.isdigit():
            raise StreamsError(f"--from-offsets {text!r}: expected PARTITION:OFFSET,... "
                               "e.g. 0:120,1:98")
        out[int(p)] = int(o)
    if not out:
        raise StreamsError("--from-offsets: no PARTITION:OFFSET given")
    return out


@dataclass
class Plan:
    group: str
    starts: dict[TopicPartition, int] = field(default_factory=dict)
    ends: dict[TopicPartition, int] = field(default_factory=dict)
    #: the group had committed offsets: this run resumes an earlier one
    resumed: bool = False

    @property
    def total(self) -> int:
        return sum(max(0, self.ends[tp] - self.starts[tp]) for tp in self.ends)


async def plan(settings: Settings, topic: str, group: str, *, since: datetime | None = None,
               from_offsets: dict[int, int] | None = None, commit: bool = True) -> Plan:
    """Start and end offsets per partition; with ``commit`` the start of a first run is
    committed for ``group`` so the consumer group begins exactly there."""
    consumer = kafka_clients.consumer(settings.kafka, group_id=group, enable_auto_commit=False,
                                      auto_offset_reset="earliest")
    try:  # stopped also when its start failed (a refused group): no client left open
        await consumer.start()
        tps = await assign_all(consumer, [topic])
        if not tps:
            raise StreamsError(f"topic {topic!r} does not exist")
        out = Plan(group, ends=await consumer.end_offsets(tps))
        firsts = await consumer.beginning_offsets(tps)
        committed = {tp: await consumer.committed(tp) for tp in tps}
        out.resumed = any(c is not None for c in committed.values())
        times = await consumer.offsets_for_times(
            {tp: int(since.timestamp() * 1000) for tp in tps}) if since and not out.resumed \
            else {}
        for tp in tps:
            if out.resumed:
                start = committed[tp] if committed[tp] is not None else firsts[tp]
            elif from_offsets is not None:
                start = from_offsets.get(tp.partition, out.ends[tp])
            elif since is not None:
                found = times.get(tp)
                start = found.offset if found is not None else out.ends[tp]
            else:
                start = firsts[tp]
            out.starts[tp] = min(max(start, firsts[tp]), out.ends[tp])
        if commit and not out.resumed and out.total:
            await consumer.commit(dict(out.starts))
        return out
    finally:
        await consumer.stop()


async def read_range(settings: Settings, p: Plan, on_record: Callable[[Any], Awaitable[None]],
                     timeout: float = 300.0) -> None:
    """Await ``on_record`` for every record of the plan's range (group-less; commits nothing)."""
    todo = {tp for tp in p.ends if p.starts[tp] < p.ends[tp]}
    if not todo:  # nothing to read: no consumer (one stopped right after its start
        return    # raises CancelledError out of aiokafka's coordinator close)
    consumer = kafka_clients.consumer(settings.kafka, group_id=None, enable_auto_commit=False)
    try:
        await consumer.start()
        consumer.assign(list(p.ends))
        for tp in todo:
            consumer.seek(tp, p.starts[tp])
        async with asyncio.timeout(timeout):
            while todo:
                batch = await consumer.getmany(*todo, timeout_ms=500)
                for tp, records in batch.items():
                    for rec in records:
                        if rec.offset < p.ends[tp]:
                            await on_record(rec)
                todo = {tp for tp in todo if await consumer.position(tp) < p.ends[tp]}
    finally:
        await consumer.stop()

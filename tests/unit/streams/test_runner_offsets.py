"""The runner's commit bookkeeping without a broker: the committed offset is the lowest one
still in flight (records finish out of order), and a revoked partition is drained, committed
and forgotten."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiokafka import TopicPartition

from streams.metrics import Metrics
from streams.runner import ConcurrentWorker, PartitionOffsets
from tests.helpers import test_settings


def book(in_flight: set[int], next_commit: int | None, committed: int | None
         ) -> PartitionOffsets:
    return PartitionOffsets(set(in_flight), next_commit, committed)


@pytest.mark.parametrize(("in_flight", "next_commit", "committed", "expected"), [
    # nothing polled yet: nothing to commit
    (set(), None, None, None),
    # 5 and 6 still running, 4 done: only 5 may be committed (4 is below it)
    ({5, 6}, 5, None, 5),
    # 7 finished before 5 and 6: the commit still stops at the lowest in flight
    ({5, 6}, 8, None, 5),
    # the same offset was committed already: nothing new to say
    ({5, 6}, 8, 5, None),
    # every record finished: one past the highest
    (set(), 8, 5, 8),
    (set(), 8, 8, None),
    # a lower record in flight than the last commit never moves the commit backwards
    ({3}, 8, 5, None),
])
def test_committable_is_the_lowest_unacknowledged_offset(
        in_flight: set[int], next_commit: int | None, committed: int | None,
        expected: int | None) -> None:
    assert book(in_flight, next_commit, committed).committable() == expected


class RecordingConsumer:
    def __init__(self) -> None:
        self.commits: list[dict[TopicPartition, int]] = []

    async def commit(self, offsets: dict[TopicPartition, int]) -> None:
        self.commits.append(dict(offsets))


def worker() -> tuple[ConcurrentWorker, RecordingConsumer]:
    s = test_settings("127.0.0.1:1", llm={"deadline_seconds": 1.0})
    w = ConcurrentWorker(s, name="t", topic="in", group_id="g", handler=_never,
                         concurrency=4, metrics=Metrics.create(),
                         call_deadline_seconds=1.0)
    consumer = RecordingConsumer()
    w.consumer = consumer  # type: ignore[assignment]
    return w, consumer


async def _never(rec: Any) -> list[Any]:
    raise AssertionError("not called")


async def test_commit_covers_each_partition_up_to_its_lowest_in_flight_record() -> None:
    w, consumer = worker()
    a, b = TopicPartition("in", 0), TopicPartition("in", 1)
    w._parts[a] = book({10}, 12, None)
    w._parts[b] = book(set(), 4, None)
    await w._commit()
    assert consumer.commits == [{a: 10, b: 4}]
    assert (w._parts[a].committed, w._parts[b].committed) == (10, 4)
    await w._commit()  # nothing changed: no second commit request
    assert len(consumer.commits) == 1


async def test_a_revoked_partition_waits_for_its_records_then_commits_and_is_forgotten(
        ) -> None:
    w, consumer = worker()
    revoked, kept = TopicPartition("in", 0), TopicPartition("in", 1)
    w._parts[revoked] = book({3}, 3, None)
    w._parts[kept] = book({9}, 9, None)
    release = asyncio.Event()

    async def finish_record_3() -> None:
        await release.wait()
        w._parts[revoked].in_flight.discard(3)
        w._parts[revoked].next_commit = 4

    task = asyncio.create_task(finish_record_3())
    w._tasks.add(task)
    w._task_tp[task] = revoked
    revoking = asyncio.create_task(w.on_revoked([revoked]))
    await asyncio.sleep(0)  # let on_revoked start waiting on the in-flight record
    assert not revoking.done() and consumer.commits == []
    release.set()
    await revoking
    assert consumer.commits == [{revoked: 4}]  # after the record finished, only this one
    assert revoked not in w._parts and kept in w._parts


async def test_a_partition_revoked_while_its_commit_is_awaited_is_no_error() -> None:
    """A reconnect after a cut-off: the rebalance revokes a partition while the periodic
    commit still awaits the broker (in CI this KeyError ended the judge worker)."""
    w, _ = worker()
    a, b = TopicPartition("in", 0), TopicPartition("in", 1)
    w._parts[a] = book(set(), 7, None)
    w._parts[b] = book(set(), 3, None)

    class Revoking(RecordingConsumer):
        async def commit(self, offsets: dict[TopicPartition, int]) -> None:
            await super().commit(offsets)
            w._parts.pop(a)  # what on_revoked does meanwhile

    w.consumer = Revoking()  # type: ignore[assignment]
    await w._commit()
    assert a not in w._parts and w._parts[b].committed == 3

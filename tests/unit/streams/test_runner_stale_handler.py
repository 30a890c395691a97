"""Issue 25 item 9 (b), forced: a handler still running past ``drain_seconds`` after its
partition was revoked finishes once the partition is assigned to this worker again. It must
not move the new generation's commit position: the new generation has not fetched (nor
handled) the offsets between its own progress and the stale record, and a stale record
still running below it may never publish (a kill then loses it).

The records, the handler and the producer are stubs; the runner (dispatch, handling,
publishing, revocation, the commit bookkeeping) is the real one. Events order everything:
no sleeps decide the outcome."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiokafka import TopicPartition

from streams.metrics import Metrics
from streams.runner import ConcurrentWorker, Output, PartitionOffsets
from tests.helpers import test_settings
from tests.unit.streams.test_runner_faults import Rec, StubProducer
from tests.unit.streams.test_runner_offsets import RecordingConsumer

TP = TopicPartition("in", 0)


class Handler:
    """The first call for an offset in ``slow`` waits for its release (an LLM call longer than
    the drain); every other call answers at once. ``published`` lists what reached the
    producer, by offset."""

    def __init__(self, slow: set[int]) -> None:
        self.release = {o: asyncio.Event() for o in slow}
        self.calls: dict[int, int] = {}

    async def __call__(self, rec: Any) -> list[Output]:
        n = self.calls[rec.offset] = self.calls.get(rec.offset, 0) + 1
        if n == 1 and rec.offset in self.release:
            await self.release[rec.offset].wait()
        return [Output("out", rec.key, str(rec.offset).encode())]


def worker(handler: Handler) -> tuple[ConcurrentWorker, StubProducer, RecordingConsumer]:
    s = test_settings("127.0.0.1:1", llm={"deadline_seconds": 1.0})
    w = ConcurrentWorker(s, name="t", topic="in", group_id="g", handler=handler,
                         concurrency=4, metrics=Metrics.create(), call_deadline_seconds=1.0)
    producer = StubProducer([])
    w.publisher.producer = producer  # type: ignore[assignment]
    consumer = RecordingConsumer()
    w.consumer = consumer  # type: ignore[assignment]
    return w, producer, consumer


def fetched(w: ConcurrentWorker, *offsets: int) -> None:
    """What the poll loop does with a fetched batch."""
    for offset in offsets:
        w._parts.setdefault(TP, PartitionOffsets()).in_flight.add(offset)
        w._pending.append((TP, Rec(b"{}", offset=offset)))


async def until(cond: Any) -> None:
    """Let the tasks run until ``cond()`` (a step of the event loop at a time)."""
    for _ in range(1000):
        if cond():
            return
        await asyncio.sleep(0)
    raise AssertionError("the condition never came")


def published(p: StubProducer) -> set[int]:
    return {int(value) for _, value, _ in p.sent}


def safe_commit(p: StubProducer, commit: int) -> bool:
    """Every offset below ``commit`` has its outputs acknowledged (from offset 5 on)."""
    return all(o in published(p) for o in range(5, commit))


async def test_a_stale_handler_never_moves_the_commit_of_the_next_generation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ConcurrentWorker, "drain_seconds", property(lambda self: 0.05))
    handler = Handler(slow={5, 6, 7})
    w, producer, consumer = worker(handler)

    # generation 1 fetched 5, 6, 7; all three are in slow calls when the partition is revoked
    fetched(w, 5, 6, 7)
    await w._dispatch()
    stale = set(w._tasks)
    await until(lambda: handler.calls == {5: 1, 6: 1, 7: 1})
    await w.on_revoked([TP])  # waits drain_seconds, commits below the lowest in flight
    assert consumer.commits == [{TP: 5}] and TP not in w._parts

    # generation 2 (the partition is back): the first poll gives 5 alone; it is handled
    fetched(w, 5)
    await w._dispatch()
    await asyncio.wait([t for t in w._tasks if t not in stale])
    await w._commit()
    assert consumer.commits[-1] == {TP: 6} and published(producer) == {5}

    # generation 1's record 7 finishes now (6 is still in its slow call, not fetched again)
    handler.release[7].set()
    await until(lambda: sum(t.done() for t in stale) == 1)
    assert published(producer) == {5, 7}
    await w._commit()
    last = consumer.commits[-1][TP]
    assert safe_commit(producer, last), (
        f"committed {last} while offset 6 has no output: a kill now loses it")

    # the rest of generation 2 goes on as usual and commits everything once it is handled
    fetched(w, 6, 7)
    await w._dispatch()
    await asyncio.wait([t for t in w._tasks if t not in stale])
    await w._commit()
    assert consumer.commits[-1] == {TP: 8} and published(producer) >= {5, 6, 7}
    handler.release[6].set()  # the last stale call ends; it changes no commit position
    await asyncio.wait(list(stale), timeout=1)
    await w._commit()
    assert consumer.commits[-1] == {TP: 8} and w._parts[TP].committable() is None

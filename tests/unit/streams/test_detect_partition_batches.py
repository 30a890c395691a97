"""The detect edge's record batches: each record lands where the producer's ``send`` would
have put it, full batches are continued in a new one, and batches are handed over in the
order their partitions were first written (outputs before the cell states recording them)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from aiokafka.partitioner import DefaultPartitioner
from aiokafka.producer.message_accumulator import BatchBuilder

from streams.detect.partition_batches import PartitionBatches


class FakeProducer:
    """The aiokafka producer surface PartitionBatches uses, recording what is handed over."""

    def __init__(self, batch_size: int) -> None:
        self.batch_size = batch_size
        self.handed: list[tuple[str, int, int]] = []  # topic, partition, records in the batch
        self._partitioner = DefaultPartitioner()
        cluster = SimpleNamespace(partitions_for_topic=lambda t: {0, 1, 2, 3},
                                  available_partitions_for_topic=lambda t: {0, 1, 2, 3})

        async def wait_on_metadata(topic: str) -> None:
            return None

        self.client = SimpleNamespace(cluster=cluster, _wait_on_metadata=wait_on_metadata)

    def create_batch(self) -> BatchBuilder:
        return BatchBuilder(self.batch_size, 0)  # 0: no compression

    async def send_batch(self, batch: BatchBuilder, topic: str, *, partition: int) -> Any:
        self.handed.append((topic, partition, batch.record_count()))
        fut = asyncio.get_running_loop().create_future()
        fut.set_result(None)
        return fut


def test_records_go_where_send_would_put_them() -> None:
    async def scenario() -> list[int]:
        out = PartitionBatches(FakeProducer(16384))  # type: ignore[arg-type]
        return [await out.partition_of("jobs", f"task|P{i}|field".encode()) for i in range(40)]

    got = asyncio.run(scenario())
    want = [DefaultPartitioner()(f"task|P{i}|field".encode(), [0, 1, 2, 3], [0, 1, 2, 3])
            for i in range(40)]
    assert got == want and len(set(got)) == 4


def test_full_batches_continue_and_order_is_kept() -> None:
    async def scenario() -> tuple[list[tuple[str, int, int]], int, int]:
        producer = FakeProducer(400)
        out = PartitionBatches(producer)  # type: ignore[arg-type]
        for i in range(5):
            out.add("outcomes", 1, b"k%d" % i, b"x" * 150)
        out.add("changelog", 1, b"k0", b"y" * 2000)  # larger than a batch: a batch of its own
        out.add("outcomes", 2, b"k9", b"z")
        futures: list[Any] = []
        await out.send(futures.append)
        return producer.handed, len(futures), out.records

    handed, futures, records = asyncio.run(scenario())
    assert records == 7
    assert [(t, p) for t, p, _ in handed] == [("outcomes", 1)] * 3 + [("changelog", 1),
                                                                    ("outcomes", 2)]
    assert sum(n for t, p, n in handed if (t, p) == ("outcomes", 1)) == 5
    assert futures == len(handed)


def test_a_failure_partway_leaves_every_handed_batch_watched() -> None:
    """The producer refuses the second partition's batch: the first one, already handed
    over, has been passed to the watcher before the error reaches the edge."""

    class Refusing(FakeProducer):
        async def send_batch(self, batch: BatchBuilder, topic: str, *, partition: int) -> Any:
            if partition == 2:
                raise RuntimeError("accumulator closed")
            return await super().send_batch(batch, topic, partition=partition)

    async def scenario() -> tuple[list[Any], PartitionBatches]:
        out = PartitionBatches(Refusing(16384))  # type: ignore[arg-type]
        out.add("outcomes", 1, b"a", b"1")
        out.add("outcomes", 2, b"b", b"2")
        watched: list[Any] = []
        try:
            await out.send(watched.append)
        except RuntimeError:
            return watched, out
        raise AssertionError("the refusal must reach the caller")

    watched, out = asyncio.run(scenario())
    assert len(watched) == 1 and not out._batches

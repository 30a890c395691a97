"""aiokafka's send costs ~30 µs a record; Faust 0.15.3 commits past its changelog buffer.

The detect edge's sends: a batch's records appended to one record batch per topic-partition,
then each batch handed to the producer in one call (aiokafka's ``create_batch`` and
``send_batch``), instead of one awaited ``send`` per record.

Why: ``send`` per record cost about 30 µs of the worker's single core per record (a metadata
check, the partitioner over a fresh list of partitions, a future and an accumulator lookup
per record; py-spy, 2026-12-01), and a detect batch sends 1.2 records per input event. Here
a record costs one ``append`` into a C-built record batch. Nothing about delivery changes:
the batches sit in the same producer accumulator as any ``send``, so the producer's flush
before Faust commits the input offsets waits for them; each batch's future is watched like
a record's (one the broker refuses stops the worker before its input is committed).

The changelog records go this way too, not through Faust's ``Table.send_changelog``: that
queues them in Faust's producer buffer, whose flush (faust-streaming 0.15.3) gives up after
0.1 s without progress and misses the record being handed over, so under load Faust could
commit input offsets whose cell states were still queued, and a kill would then lose the
answers they held. Here every record is in the producer before the batch's events are acked,
and the producer's flush before a commit waits for all of them.

A record without a partition goes where ``send`` would have put it: the producer's own
partitioner over the topic's partitions (murmur2 of the key by default).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from aiokafka import AIOKafkaProducer


class PartitionBatches:
    """Collects ``(topic, partition, key, value)`` records; :meth:`send` hands them over."""

    def __init__(self, producer: AIOKafkaProducer) -> None:
        self.producer = producer
        #: (topic, partition) -> the record batches filled so far, the last one open
        self._batches: dict[tuple[str, int], list[Any]] = {}
        self._partitions: dict[str, tuple[list[int], list[int]]] = {}
        self.records = 0

    async def partition_of(self, topic: str, key: bytes | None) -> int:
        """The partition ``send(topic, key=key)`` would choose."""
        known = self._partitions.get(topic)
        if known is None:
            p = self.producer
            await p.client._wait_on_metadata(topic)
            cluster = p.client.cluster
            known = self._partitions[topic] = (
                sorted(cluster.partitions_for_topic(topic) or ()),
                sorted(cluster.available_partitions_for_topic(topic) or ()))
        partitioner: Callable[..., int] = self.producer._partitioner
        return partitioner(key, *known)

    def add(self, topic: str, partition: int, key: bytes | None, value: bytes | None) -> None:
        batches = self._batches.setdefault((topic, partition), [])
        if not batches or batches[-1].append(timestamp=None, key=key, value=value) is None:
            fresh = self.producer.create_batch()
            fresh.append(timestamp=None, key=key, value=value)  # an empty batch takes any size
            batches.append(fresh)
        self.records += 1

    async def send(self, on_sent: Callable[[asyncio.Future[Any]], None]) -> None:
        """Hand every batch to the producer, in the order their partitions were first added
        to, passing each delivery future to ``on_sent`` as soon as the producer has its
        batch (so a failure further on cannot leave a handed-over batch unwatched). Waits
        where a partition still has a batch queued (aiokafka's ``add_batch``): the last,
        open batch of the previous flush leaves after the producer's linger, so a flush
        that follows at once waits about that long on the partitions it shares with it."""
        try:
            for (topic, partition), batches in self._batches.items():
                for batch in batches:
                    on_sent(await self.producer.send_batch(batch, topic, partition=partition))
        finally:
            self._batches.clear()

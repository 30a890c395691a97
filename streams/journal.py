"""The LLM journal: every paid answer is kept on a compacted topic before anything is published.

``judgeflow.llm-journal.v1`` (``topics.llm_journal``), keyed by ``<worker>|<result id>``
(the result id derives from the input's id and the prompt version). A value holds the
answers paid so far for that input, in call order; a worker writes it, and waits for the
broker's acknowledgement, right after each answer arrives, so a repair call that fails, a
kill or a rebalance finds the answer and reuses it instead of paying again (it also marks
a call as sent before the request leaves: a kill's lost call is then seen and counted when
it is sent again). Once the result
is acknowledged the worker writes a tombstone (compaction then drops the key), so the topic
holds only inputs in progress.

Every worker process follows the whole topic (a group-less consumer, like the result
ledger); :meth:`Journal.sync` waits until it has read everything written before the call,
so an input that moved here from another worker (rebalance, restart after a kill) sees that
worker's answers. Values are opaque bytes here (:mod:`agents.providers.journal` encodes
them).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaError

from streams import kafka_clients
from streams.kafka_clients import KafkaTarget
from streams.topics import assign_all

log = logging.getLogger(__name__)


class Journal:
    def __init__(self, bootstrap: KafkaTarget, topic: str) -> None:
        self.bootstrap, self.topic = bootstrap, topic
        self.entries: dict[str, bytes] = {}
        #: our own writes not yet read back: they win over older values the follower reads
        self._local: dict[str, bytes] = {}
        self._consumer: AIOKafkaConsumer | None = None
        self._producer: AIOKafkaProducer | None = None
        self._follower: asyncio.Task[None] | None = None
        self._tps: list[TopicPartition] = []
        self._progress = asyncio.Event()

    async def start(self) -> Journal:
        self._producer = kafka_clients.producer(self.bootstrap, acks="all",
                                                enable_idempotence=True)
        self._consumer = kafka_clients.consumer(self.bootstrap, group_id=None,
                                                enable_auto_commit=False,
                                                auto_offset_reset="earliest")
        await self._producer.start()
        await self._consumer.start()
        self._tps = await assign_all(self._consumer, [self.topic], wait=10.0)
        if self._tps:
            await self._consumer.seek_to_beginning(*self._tps)
        self._follower = asyncio.create_task(self._follow())
        await self.sync()
        log.info("llm journal: %d input(s) with paid answers or a call in flight, not yet "
                 "published", len(self.entries))
        return self

    async def stop(self) -> None:
        if self._follower is not None:
            self._follower.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._follower
        for client in (self._consumer, self._producer):
            if client is not None:
                with contextlib.suppress(Exception):
                    await client.stop()

    async def _follow(self) -> None:
        assert self._consumer is not None
        while True:
            try:
                batch = await self._consumer.getmany(timeout_ms=200)
            except KafkaError as exc:
                log.warning("llm journal: read failed (%s); retrying", type(exc).__name__)
                await asyncio.sleep(1.0)
                continue
            for records in batch.values():
                for rec in records:
                    key = (rec.key or b"").decode(errors="replace")
                    if rec.value is None:
                        self.entries.pop(key, None)
                        self._local.pop(key, None)
                    else:
                        self.entries[key] = rec.value
                        if self._local.get(key) == rec.value:
                            del self._local[key]
            self._progress.set()
            self._progress = asyncio.Event()

    async def sync(self, timeout: float = 30.0) -> None:
        """Wait until everything on the topic when called has been read."""
        assert self._consumer is not None
        if not self._tps:
            return
        ends = await self._consumer.end_offsets(self._tps)
        deadline = asyncio.get_running_loop().time() + timeout
        while [tp for tp, end in ends.items() if await self._consumer.position(tp) < end]:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                raise TimeoutError(f"{self.topic} not read to its end in {timeout:g}s")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._progress.wait(), min(left, 0.5))

    def get(self, key: str) -> bytes | None:
        return self._local.get(key) or self.entries.get(key)

    async def put(self, key: str, value: bytes) -> None:
        """Write ``value`` under ``key`` and return once the broker acknowledged it (retried
        while the broker is away: an answer that is not kept may be paid twice)."""
        assert self._producer is not None
        self._local[key] = value
        wait = 0.2
        while True:
            try:
                await (await self._producer.send(self.topic, key=key.encode(), value=value))
                return
            except KafkaError as exc:
                log.warning("llm journal: write failed (%s); retrying in %.1fs",
                            type(exc).__name__, wait)
                await asyncio.sleep(wait)
                wait = min(2 * wait, 5.0)

    def has(self, key: str) -> bool:
        return key in self._local or key in self.entries


@contextlib.asynccontextmanager
async def open_journal(bootstrap: KafkaTarget, topic: str) -> AsyncIterator[Journal]:
    journal = Journal(bootstrap, topic)
    try:
        yield await journal.start()
    finally:
        await journal.stop()

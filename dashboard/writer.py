"""The page's one write: an adjudication onto ``chart-review.adjudications.v1``, keyed by cell.

:meth:`Writer.send` returns only after the broker acknowledged the record (``acks=all``,
idempotent producer), so the page can say "saved" truthfully. The producer starts on the
first save (the page serves reads while the broker is away) and is rebuilt after a failure.
A save that timed out may still reach the topic later; it then carries the same
``adjudication_id`` as the resend, so consumers drop the copy.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import orjson
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaError

from schemas.calibration import Adjudication
from streams import kafka_clients
from streams.kafka_access import KafkaAccessError
from streams.kafka_clients import KafkaTarget

log = logging.getLogger(__name__)


class WriteFailed(Exception):
    """The broker did not acknowledge the adjudication (nothing is known to be saved)."""


class Writer:
    def __init__(self, bootstrap: KafkaTarget, topic: str, timeout: float = 10.0) -> None:
        self.bootstrap, self.topic, self.timeout = bootstrap, topic, timeout
        self._producer: AIOKafkaProducer | None = None
        self._lock = asyncio.Lock()
        self.sent = 0
        self.failed = 0

    async def _started(self) -> AIOKafkaProducer:
        if self._producer is None:
            producer = kafka_clients.producer(
                self.bootstrap, acks="all", enable_idempotence=True,
                request_timeout_ms=int(self.timeout * 1000), linger_ms=0)
            try:
                await producer.start()
            except BaseException:
                with contextlib.suppress(Exception):
                    await producer.stop()
                raise
            self._producer = producer
        return self._producer

    async def send(self, adjudication: Adjudication) -> None:
        await self.send_record(adjudication.key.encode(),
                               orjson.dumps(adjudication.model_dump(mode="json")))

    async def send_record(self, key: bytes, value: bytes) -> None:
        """One record, returned only once the broker acknowledged it (the audit trail's
        writer, :mod:`dashboard.access_audit`, is a second ``Writer`` on its own topic)."""
        try:
            async with asyncio.timeout(self.timeout):
                async with self._lock:
                    producer = await self._started()
                fut = await producer.send(self.topic, key=key, value=value)
                await fut
        except (KafkaError, KafkaAccessError, TimeoutError, OSError) as exc:
            self.failed += 1
            log.warning("%s: record not acknowledged (%s)", self.topic, type(exc).__name__)
            await self._reset()
            raise WriteFailed(type(exc).__name__) from None
        self.sent += 1

    async def _reset(self) -> None:
        async with self._lock:
            producer, self._producer = self._producer, None
        if producer is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(2.0):
                    await producer.stop()

    async def close(self) -> None:
        await self._reset()

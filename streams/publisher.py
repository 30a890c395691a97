"""Publishing a record's outputs for the concurrent runner (:mod:`streams.runner`): sent until
the broker acknowledged every one, never raising for a broker fault.

A failed send is retried (only the outputs not yet acknowledged, with a doubling pause up
to 5 s) until it succeeds or the worker stops; after two failures in a row the producer is
replaced (after a broker restart an idempotent producer's sequence state is stale). An
output the broker refuses as too large is replaced by a dead letter of its input; a dead
letter refused as too large is skipped with one ERROR line. A refusal no retry can fix (a
denied ACL or login, :data:`streams.kafka_access.FATAL`) stops the worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.errors import MessageSizeTooLargeError

from streams import kafka_clients
from streams.kafka_access import is_fatal
from streams.metrics import Metrics
from streams.settings import Settings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Output:
    topic: str
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...] = ()
    #: sent only once every other output of the record is acknowledged (a journal
    #: tombstone must never land before the result it stands for)
    last: bool = False


class Publisher:
    def __init__(self, settings: Settings, name: str, metrics: Metrics, dlq_topic: str,
                 dead_letter: Callable[[Any, str, str], Output],
                 stop_event: asyncio.Event, fatal: Callable[[BaseException], None]) -> None:
        self.settings, self.name, self.metrics = settings, name, metrics
        self.dlq_topic = dlq_topic
        #: ``dead_letter(rec, error_type, message)``: the dead letter of an input (counted)
        self.dead_letter = dead_letter
        self.stop_event = stop_event
        #: called with an error no retry fixes: the worker stops
        self.fatal = fatal
        self.producer: AIOKafkaProducer | None = None
        self._renew_lock = asyncio.Lock()

    def new_producer(self) -> AIOKafkaProducer:
        return kafka_clients.producer(self.settings.kafka, acks="all", enable_idempotence=True,
                                      linger_ms=5)

    async def renew(self, failed: Any) -> None:
        """Replace a producer whose sends keep failing (after a broker restart the idempotent
        producer's sequence state is stale: OutOfOrderSequenceNumber forever)."""
        stop_failed = failed.stop
        async with self._renew_lock:
            if self.producer is not failed:
                return  # another task already replaced it
            log.warning("%s: replacing the producer after repeated send failures", self.name)
            fresh = self.new_producer()
            await fresh.start()
            self.producer = fresh
        with contextlib.suppress(Exception):
            await asyncio.wait_for(stop_failed(), 10)

    async def publish(self, rec: Any, outputs: Sequence[Output]) -> bool:
        """Send ``outputs`` (those marked ``last`` after the others) until the broker
        acknowledged all of them; False if the worker stopped first."""
        first = [o for o in outputs if not o.last]
        return (await self._publish_all(rec, first) and
                await self._publish_all(rec, [o for o in outputs if o.last]))

    async def _publish_all(self, rec: Any, outputs: Sequence[Output]) -> bool:
        """Send ``outputs`` until the broker acknowledged all of them; False if the worker
        stopped first. Never raises: a worker must not die of a broker fault."""
        todo = list(outputs)
        wait = 0.2
        failures = 0
        while todo:
            producer = self.producer
            try:
                todo = await self._send(todo)
            except MessageSizeTooLargeError:
                if any(o.topic == self.dlq_topic for o in todo):
                    log.error("%s: dead letter for %s[%d]@%d refused as too large; skipped",
                              self.name, rec.topic, rec.partition, rec.offset)
                    return True
                todo = [self.dead_letter(rec, "oversized", "an output of this record exceeds "
                                         "the broker's record size limit")]
                continue
            except Exception as exc:
                if is_fatal(exc):
                    self.fatal(exc)
                    return False
                failures += 1
                log.warning("%s: publishing outputs failed (%s); retrying in %.1fs",
                            self.name, type(exc).__name__, wait)
                if failures >= 2 and producer is not None:
                    with contextlib.suppress(Exception):
                        await self.renew(producer)
            if todo:
                if self.stop_event.is_set():
                    return False
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.stop_event.wait(), wait)
                wait = min(wait * 2, 5.0)
        return True

    async def _send(self, outputs: Sequence[Output]) -> list[Output]:
        """Send; returns the outputs still unacknowledged (raises if none was)."""
        assert self.producer is not None
        futures = [await self.producer.send(o.topic, value=o.value, key=o.key,
                                            headers=list(o.headers) or None) for o in outputs]
        left: list[Output] = []
        error: BaseException | None = None
        for o, fut in zip(outputs, futures, strict=True):
            try:
                await fut
            except MessageSizeTooLargeError:
                raise
            except Exception as exc:
                left.append(o)
                error = exc
                continue
            self.metrics.records_out.labels(self.name, o.topic).inc()
        if error is not None and len(left) == len(outputs):
            raise error
        return left

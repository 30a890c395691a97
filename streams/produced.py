"""The one "already produced" guard: which output ids exist, so an input is not paid for twice.

Kafka is the only durable state, so the guard is rebuilt from the output topic itself: on
start a worker reads the topic from the beginning to its end offsets (before consuming any
input, :meth:`ProducedIds.load`) and remembers every output id. While it runs it adds the ids
it produces. Output ids derive from the input and the prompt version (a judge result from
job and version, a case evaluation from request and version, a calibration record from its
group and figures), so an input redelivered after a crash (its output published, its offset
not yet committed) or replayed under the same version is recognised and skipped; a new
prompt version is produced again. Two deliveries of one input in flight at once collapse
too: the second waits for the first (:meth:`ProducedIds.claim`) and then emits nothing, and
a failed attempt leaves the id free for the next delivery.

Limits: the start-up scan is linear in the size of the topic (ids only are kept); an output
published by *another* replica after this replica's scan is not seen (possible only around a
rebalance), and consumers de-duplicate by id anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Iterable

from streams.kafka_clients import KafkaTarget
from streams.series import Series, scan_series
from streams.topics import ids_on_topic

log = logging.getLogger(__name__)


class ProducedIds:
    def __init__(self, ids: Iterable[str] = (), series: Series | None = None) -> None:
        self.ids: set[str] = set(ids)
        #: what the topic held at start, per input and prompt version (for ``supersedes``)
        self.series = series or Series()
        self._in_flight: dict[str, asyncio.Event] = {}

    def __contains__(self, rid: str) -> bool:
        return rid in self.ids

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, rid: str) -> None:
        self.ids.add(rid)

    @contextlib.asynccontextmanager
    async def claim(self, rid: str) -> AsyncIterator[bool]:
        """Yields True when the caller should produce ``rid`` (it then counts as produced
        when the block exits without error), False when it exists or was just produced."""
        while (pending := self._in_flight.get(rid)) is not None:
            await pending.wait()
        if rid in self.ids:
            yield False
            return
        done = self._in_flight[rid] = asyncio.Event()
        try:
            yield True
            self.ids.add(rid)
        finally:
            del self._in_flight[rid]
            done.set()

    async def load(self, kafka: KafkaTarget, topic: str, id_field: str,
                   input_field: str | None = None, timeout: float = 120.0) -> int:
        """Remember every ``id_field`` on ``topic``; returns how many were found. With an
        ``input_field`` the topic is a result series (:mod:`streams.series`) and
        :attr:`series` is rebuilt from it too."""
        if input_field is None:
            found = await ids_on_topic(kafka, topic, id_field, timeout)
        else:
            self.series = await scan_series(kafka, topic, id_field, input_field, timeout)
            found = self.series.ids
        self.ids |= found
        log.info("%d existing %s(s) on %s", len(found), id_field, topic)
        return len(found)

    @classmethod
    async def from_topic(cls, kafka: KafkaTarget, topic: str, id_field: str,
                         input_field: str | None = None,
                         timeout: float = 120.0) -> ProducedIds:
        produced = cls()
        await produced.load(kafka, topic, id_field, input_field, timeout)
        return produced

"""Which results already exist, so a redelivered job is not paid for twice.

Kafka is the only durable state, so the ledger is rebuilt from the results topic itself:
on start the worker reads ``chart-review.judge-results.v1`` from the beginning to its end
offsets (before consuming any job) and remembers every ``result_id``. While it runs it adds
the ids it produces. ``result_id = sha256(job_id | prompt_version)``, so a job redelivered
after a crash (its result was published but its offset not yet committed) or replayed under
the same prompt version is recognised and skipped; a new prompt version is judged again.
Two deliveries of one job in flight at once are collapsed too: the second waits for the
first and then emits nothing.

Limits: the start-up scan is linear in the size of the results topic (ids only, 32 bytes
each, are kept); a result published by *another* replica after this replica's scan is not
seen (possible only around a rebalance), and consumers de-duplicate by ``result_id`` anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

from streams.series import Series, scan_series

log = logging.getLogger(__name__)


class ResultLedger:
    def __init__(self) -> None:
        self.ids: set[str] = set()
        #: what the results topic held at start, per job and version (for ``supersedes``)
        self.series = Series()
        self._in_flight: dict[str, asyncio.Event] = {}

    def __contains__(self, rid: str) -> bool:
        return rid in self.ids

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

    async def load(self, bootstrap: str, topic: str, timeout: float = 120.0) -> int:
        """Remember every ``result_id`` on ``topic``; returns how many were found."""
        self.series = await scan_series(bootstrap, topic, "result_id", "job_id", timeout)
        self.ids |= self.series.ids
        log.info("result ledger: %d existing result(s) on %s", len(self.ids), topic)
        return len(self.series.ids)

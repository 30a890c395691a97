"""Settle ticks wait for the answers stream to catch up.

A cell is decided "by timeout" when its settle window has passed on the wall clock. If the
worker was down (a restart, a rebalance) or is behind, the missing agents' answers may be
sitting unread in the partition: deciding then would report ``agent_missing`` for an agent
that did answer. So a partition is *ready* for settle ticks only once the stream has
processed every record that was in it at the previous timer run (after the deadline passed).
"Processed" is the stream's *committed* offset: Faust commits only what the stream has
acknowledged. Its read offset cannot be used: right after an assignment Faust seeks and sets
the read offset to the committed position, the next record to read, while during iteration
it holds the last record handed to the stream, so a one-record backlog looked read (the
SIGKILL test's ``agent_missing`` flake). Under steady load a partition is ready about one
commit interval after its previous end; after a restart, once the backlog is read and
committed. Faust exposes the committed offsets only as a private field (faust-streaming
0.15); a missing field makes every partition ready (the old behaviour).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from faust.types import TP

log = logging.getLogger(__name__)


class CatchUp:
    def __init__(self, consumer_of: Any, topic: str, max_age: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._consumer_of = consumer_of  # () -> the app's Faust consumer
        self.topic = topic
        self._marks: dict[int, int] = {}
        #: Marks older than this are not trusted: a timer starved by a busy event loop may
        #: have taken them before records that are now overdue had even arrived.
        self.max_age = max_age
        self._clock = clock
        self._marked_at = float("-inf")

    def _processed(self, consumer: Any, tp: TP) -> int:
        return getattr(consumer, "_committed_offset", {}).get(tp) or 0

    async def ready(self, partitions: Iterable[int]) -> set[int]:
        """Which of ``partitions`` have caught up with their end as of the previous call."""
        wanted = sorted(set(partitions))
        if not wanted:
            self._marks.clear()
            return set()
        consumer = self._consumer_of()
        if not hasattr(consumer, "_committed_offset"):
            return set(wanted)
        tps = [TP(self.topic, p) for p in wanted]
        try:
            ends = await consumer.highwaters(*tps)
        except Exception as exc:  # broker away: decide nothing by timeout until it is back
            log.debug("end offsets unavailable (%s)", type(exc).__name__)
            return set()
        now = self._clock()
        if self.max_age is not None and now - self._marked_at > self.max_age:
            self._marks.clear()
        self._marked_at = now
        ready = set()
        for tp in tps:
            mark = self._marks.get(tp.partition)
            if mark is not None and self._processed(consumer, tp) >= mark:
                ready.add(tp.partition)
            self._marks[tp.partition] = int(ends.get(tp) or 0)
        return ready

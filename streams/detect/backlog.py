"""Settle ticks wait for the answers stream to catch up.

A cell is decided "by timeout" when its settle window has passed on the wall clock. If the
worker was down (a restart, a rebalance) or is behind, the missing agents' answers may be
sitting unread in the partition: deciding then would report ``agent_missing`` for an agent
that did answer. So a partition is *ready* for settle ticks only once the stream has
processed every record that was in it at the previous timer run (after the deadline passed).
Under steady load that holds one timer period later; after a restart, once the backlog is
read. Faust exposes the read and committed offsets only as private fields (checked with
faust-streaming 0.11); a missing field makes every partition ready (the old behaviour).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from faust.types import TP

log = logging.getLogger(__name__)


class CatchUp:
    def __init__(self, consumer_of: Any, topic: str) -> None:
        self._consumer_of = consumer_of  # () -> the app's Faust consumer
        self.topic = topic
        self._marks: dict[int, int] = {}

    def _processed(self, consumer: Any, tp: TP) -> int:
        read = getattr(consumer, "_read_offset", {}).get(tp)
        committed = getattr(consumer, "_committed_offset", {}).get(tp)
        return max(read + 1 if read is not None else 0, committed or 0)

    async def ready(self, partitions: Iterable[int]) -> set[int]:
        """Which of ``partitions`` have caught up with their end as of the previous call."""
        wanted = sorted(set(partitions))
        if not wanted:
            self._marks.clear()
            return set()
        consumer = self._consumer_of()
        if not hasattr(consumer, "_read_offset"):
            return set(wanted)
        tps = [TP(self.topic, p) for p in wanted]
        try:
            ends = await consumer.highwaters(*tps)
        except Exception as exc:  # broker away: decide nothing by timeout until it is back
            log.debug("end offsets unavailable (%s)", type(exc).__name__)
            return set()
        ready = set()
        for tp in tps:
            mark = self._marks.get(tp.partition)
            if mark is not None and self._processed(consumer, tp) >= mark:
                ready.add(tp.partition)
            self._marks[tp.partition] = int(ends.get(tp) or 0)
        return ready

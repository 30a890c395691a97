"""Faust can leave a restarted worker assigned, ready and reading nothing (faust-streaming #471).

The detect worker's stall exit, and what the edge's timers read from Faust's consumer.

The stall exit answers a Faust behaviour: a restarted worker, assigned and ready, that never
delivers the records it fetched. Partitions it owns have records waiting and none has been
read for the limit (:class:`StallWatch`); it exits with one line
so that its supervisor restarts it. A quarter of the limit in, it first reads each such
partition again from its position (a seek), which is what a restart would do, without
the restart. Reading changelogs or rebalancing is not a stall."""

from __future__ import annotations

import logging
from typing import Any

from faust.types import TP

from streams.detect.backlog import SettleGate
from streams.worker_main import exit_now

log = logging.getLogger(__name__)
#: At most one end-offsets request per this many seconds.
CHECK_EVERY = 5.0


async def end_offsets(consumer: Any, topic: str, partitions: set[int]
                       ) -> dict[int, int] | None:
    """The end offsets of ``partitions`` of ``topic`` now; ``None`` when the brokers cannot
    be asked (an outage)."""
    if not partitions:
        return {}
    try:
        ends = await consumer.highwaters(*(TP(topic, p) for p in sorted(partitions)))
    except Exception as exc:
        log.debug("end offsets unavailable (%s)", type(exc).__name__)
        return None
    return {tp.partition: int(end or 0) for tp, end in ends.items()}


def committed_offsets(consumer: Any, topic: str) -> dict[int, int]:
    """The group's committed offsets (what Faust sought to at assignment and has committed
    since). Faust keeps them only in a private field (faust-streaming 0.15; a unit test
    checks it is there): without it a partition counts as read from where the stream reads."""
    offsets = getattr(consumer, "_committed_offset", {})
    return {tp.partition: int(off) for tp, off in list(offsets.items())
            if tp.topic == topic and off is not None}


class StallWatch:
    """A worker that owns partitions with records waiting but reads nothing for ``limit``
    seconds is stuck (seen once in 26 SIGKILL runs on the embedded broker: the restarted
    worker was assigned and ready, and never fetched a record). ``check`` says so; the edge
    exits and the supervisor restarts the worker."""

    def __init__(self, limit: float) -> None:
        self.limit = limit
        self._seen: dict[int, tuple[int, float]] = {}  # partition -> (read position, since)
        self._nudged: dict[int, tuple[int, float]] = {}  # the idle spells already nudged

    def check(self, behind: dict[int, int], now: float) -> list[int]:
        """``behind``: partition -> how far it has been read, for partitions with records
        waiting past that point. Returns the partitions stalled for longer than the limit."""
        stalled = []
        for partition in list(self._seen):
            if partition not in behind:
                del self._seen[partition]
        for partition, position in behind.items():
            seen = self._seen.get(partition)
            if seen is None or seen[0] != position:
                self._seen[partition] = (position, now)
            elif now - seen[1] > self.limit:
                stalled.append(partition)
        return sorted(stalled)

    def idle(self, now: float, after: float) -> list[int]:
        """Partitions seen by the last :meth:`check` with records waiting and none read for
        more than ``after`` seconds, each once per idle spell: the edge reads them again from
        their position before the limit ends the worker (a restarted worker's stream once
        read nothing at all, as if Faust had dropped the whole backlog it had fetched while
        it was still recovering; the same drop as the gaps :class:`SettleGate` re-reads)."""
        due = []
        for partition, spell in self._seen.items():
            if now - spell[1] > after and self._nudged.get(partition) != spell:
                self._nudged[partition] = spell
                due.append(partition)
        return sorted(due)

    def reset(self) -> None:
        self._seen.clear()
        self._nudged.clear()


class StallExit:
    def __init__(self, app: Any, topic: str, gate: SettleGate, limit: float) -> None:
        self.app, self.topic, self.gate = app, topic, gate
        self.watch = StallWatch(limit)
        self._last_check = float("-inf")

    def reset(self) -> None:
        self.watch.reset()

    async def check(self, now: float) -> None:
        app = self.app
        if getattr(app, "in_recovery", False) or getattr(app, "rebalancing", False):
            self.watch.reset()  # reading changelogs or rebalancing is not a stall
            return
        if now - self._last_check < CHECK_EVERY:
            return
        self._last_check = now
        mine = {tp.partition for tp in app.consumer.assignment() if tp.topic == self.topic}
        ends = await end_offsets(app.consumer, self.topic, mine)
        if not ends:
            return
        committed = committed_offsets(app.consumer, self.topic)
        behind = {}
        for partition, end in ends.items():
            read = self.gate.position(partition)
            read = committed.get(partition, 0) if read is None else read
            if end > read:
                behind[partition] = read
        stalled = self.watch.check(behind, now)
        for partition in self.watch.idle(now, self.watch.limit / 4):
            await self._read_again(partition, behind[partition])
        if stalled:
            exit_now(f"{self.topic} partition(s) {stalled}: records waiting and none read "
                     f"for {self.watch.limit:.0f} s; exiting so that the worker is restarted",
                     logger=log)

    async def _read_again(self, partition: int, position: int) -> None:
        """Seek back to where the partition has been read: records Faust fetched and never
        delivered come again (cells ignore what they applied already)."""
        log.warning("%s[%d]: records waiting and none read for %.0f s; reading again from "
                    "offset %d", self.topic, partition, self.watch.limit / 4, position)
        try:
            await self.app.consumer.seek(TP(self.topic, partition), position)
        except Exception as exc:  # revoked meanwhile: the next owner reads from the commit
            log.info("%s[%d]: cannot seek back (%s)", self.topic, partition,
                     type(exc).__name__)

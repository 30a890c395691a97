"""The detect worker's stall exit: partitions it owns have records waiting and none has been
read for the limit (:class:`~streams.detect.backlog.StallWatch`); it exits with one line
so that its supervisor restarts it. A quarter of the limit in, it first reads each such
partition again from its position (a seek), which is what a restart would do, without
the restart. Reading changelogs or rebalancing is not a stall."""

from __future__ import annotations

import logging
from typing import Any

from faust.types import TP

from streams.detect.backlog import SettleGate, StallWatch, committed_offsets, end_offsets
from streams.worker_main import exit_now

log = logging.getLogger(__name__)
#: At most one end-offsets request per this many seconds.
CHECK_EVERY = 5.0


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

"""The detect edge's timer: a settle tick for every overdue cell, to the partition the cell
lives in (the decision is taken inside the stream, where table writes belong), once the
partition's backlog is read (:mod:`streams.detect.backlog`); skipped offsets sought again
while their gap stays open; the stall exit.

The stream tells it what it did: :meth:`SettleTimer.touched` for the cells of a batch (their
ticks may be sent again at once), :meth:`SettleTimer.stored` for a cell state written.
"""

from __future__ import annotations

import logging
from typing import Any

from faust.types import TP

from streams.detect.backlog import SettleGate, tick_value
from streams.detect.stall import StallExit, committed_offsets, end_offsets
from streams.detect.store import CellStore
from streams.metrics import Metrics
from streams.settings import Settings

log = logging.getLogger(__name__)


class SettleTimer:
    def __init__(self, app: Any, settings: Settings, store: CellStore, gate: SettleGate,
                 ticks: Any, metrics: Metrics) -> None:
        self.app, self.store, self.gate, self.ticks = app, store, gate, ticks
        self.index = store.index
        self.metrics = metrics
        self.topic = settings.topics.agent_answers
        self.every = max(0.2, min(settings.settle_seconds / 4, 5.0))
        # Full rebuilds pick up cells restored from the changelog; they bound how late such
        # a cell can settle after a restart or rebalance to about one settle window.
        self.rescan_every = max(2 * self.every, min(settings.settle_seconds, 60.0))
        self._last_scan = float("-inf")
        self._ticked: dict[bytes, float] = {}
        #: The end offset when the timer first found a cell overdue: every tick for the cell
        #: carries it, so reading catches up with it even while new records keep arriving.
        self._marks: dict[bytes, int] = {}
        self._sought: dict[int, float] = {}
        #: No record read for this long on a partition with records waiting: stuck.
        self.stall = StallExit(app, self.topic, gate,
                               max(60.0, 10 * settings.kafka.session_timeout_seconds))

    def forget_marks(self, *_: Any, **__: Any) -> None:
        """An assignment, a revocation or an outage: marks are taken again."""
        self.gate.reset()
        self._marks.clear()
        self.stall.reset()

    def touched(self, keys: Any) -> None:
        for key in keys:
            self._ticked.pop(key, None)

    def stored(self, key: bytes) -> None:
        self._marks.pop(key, None)

    async def read_again(self, partition: int, offset: int, now: float) -> None:
        """Seek back over offsets the stream skipped. Records read twice change nothing
        (cells remember what they applied); the seek is repeated by the timer while the gap
        is still open (Faust may drop the records it re-fetches if its fetcher was ahead)."""
        self._sought[partition] = now
        try:
            await self.app.consumer.seek(TP(self.topic, partition), offset)
        except Exception as exc:  # revoked meanwhile: the next owner reads from the commit
            log.info("%s[%d]: cannot seek back (%s)", self.topic, partition,
                     type(exc).__name__)

    async def run(self, now: float) -> None:
        gate, index = self.gate, self.index
        if now - self._last_scan >= self.rescan_every:
            self.store.rebuild_index()
            self._last_scan = now
        for partition, offset in gate.holes().items():
            if now - self._sought.get(partition, 0.0) > 5 * self.every:
                log.info("%s[%d]: reading again from %d (still not delivered)",
                         self.topic, partition, offset)
                await self.read_again(partition, offset, now)
        overdue = index.overdue(now)
        epoch = gate.epoch
        ends = await end_offsets(self.app.consumer, self.topic, {p for _, p in overdue})
        if ends is None:  # brokers away: marks are taken again once they are back
            self.forget_marks()
            ends = {}
        # ``epoch``: ends asked for before an assignment that came meanwhile are dropped
        committed = committed_offsets(self.app.consumer, self.topic)
        gate.resume(ends, committed, epoch=epoch)
        if ends and log.isEnabledFor(logging.DEBUG):
            log.debug("settle: end offsets %s, committed %s", sorted(ends.items()),
                      sorted(committed.items()))
        for key, partition in overdue:
            if (partition in ends and gate.ready(partition)
                    and now - self._ticked.get(key, 0.0) > 5 * self.every):
                self._ticked[key] = now
                mark = self._marks.setdefault(key, ends[partition])
                await self.ticks.send(key=key, value=tick_value(mark), partition=partition)
        self.metrics.pending_cells.set(index.pending())
        await self.stall.check(now)

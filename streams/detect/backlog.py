"""Decisions by timeout never race the backlog: a condition on offsets, not on time.

A cell is decided "by timeout" when its settle window has passed on the wall clock. If the
worker was down (a restart), lost and regained the partition (a rebalance) or lost the
brokers (an outage), the missing agents' answers may be sitting unread in the partition:
deciding then would report ``agent_missing`` for an agent that did answer.

:class:`SettleGate` (pure; the Faust edge feeds it) keeps, per input partition:

* the *resume mark*: the partition's end offset when this worker (re)gained it or got the
  brokers back, taken by the first timer run after the event (later is stricter, never
  looser); until it is known, nothing on the partition is decided by timeout;
* how far the partition has been *read*: one past the last record the stream handled, and
  at least the group's committed offset (what an earlier owner handled and stored).

A settle tick carries the end offset the timer saw when it first found the cell overdue
(its *mark*; re-sent ticks carry the same one, so reading catches up with it even while
new records keep arriving). A tick decides by timeout only once
``read >= max(resume mark, tick mark)``: everything that was on the partition before the
worker resumed, and before the cell was overdue, has been read. A tick that comes too early
(a stale tick of a dead worker, read before the backlog) decides nothing; the timer sends
another.
"""

from __future__ import annotations

from collections.abc import Mapping

#: Gaps read again that a gate remembers at most (the oldest is forgotten first; a forgotten
#: gap that comes back is read again once more, which changes nothing).
MAX_RETRIED = 1024


class SettleGate:
    def __init__(self) -> None:
        self._resumed: dict[int, int] = {}
        self._read: dict[int, int] = {}
        #: partition -> (first missing offset, the offset read after the gap): offsets the
        #: stream skipped, being read again; nothing there is decided by timeout meanwhile.
        self._holes: dict[int, tuple[int, int]] = {}
        #: gaps already read again once: if one comes back, the offsets hold no record
        #: (a transaction marker) and the gap is accepted. Kept across resets, forgotten
        #: once the group's commit is past them (no read can come back there), insertion
        #: ordered and capped at MAX_RETRIED.
        self._retried: dict[tuple[int, int], None] = {}
        #: the last offset the stream delivered per partition since the last reset (gaps
        #: are looked for between delivered records only: Faust may send the assignment
        #: signal after the stream started reading, and committed offsets lag behind)
        self._last: dict[int, int] = {}
        #: Counts resets: end offsets asked for before a reset must not become resume marks
        #: after it (they may predate the assignment that the reset stands for).
        self.epoch = 0

    def reset(self) -> None:
        """An assignment, a revocation or an outage: every resume mark is taken again."""
        self._resumed.clear()
        self._read.clear()
        self._holes.clear()
        self._last.clear()
        self.epoch += 1

    def resume(self, ends: Mapping[int, int], committed: Mapping[int, int],
               epoch: int | None = None) -> None:
        """Resume marks for ``ends``' partitions (their end offsets now); ``committed``: the
        group's committed offsets (everything before them is handled and stored).
        ``epoch``: :attr:`epoch` when the end offsets were asked for; ends asked for before a
        reset are dropped (the next timer run asks again)."""
        if epoch is not None and epoch != self.epoch:
            return
        for partition, end in ends.items():
            self._resumed.setdefault(partition, end)
            self.read_to(partition, committed.get(partition, 0))
        self._forget_retried(committed)

    def read(self, partition: int, offset: int) -> int | None:
        """The stream delivered the record at ``offset``; unless :meth:`held` says otherwise,
        the edge handles it (whatever its fate: DLQ included).

        Returns the offset to read the partition again from when records were skipped: the
        stream went past offsets it never delivered (seen after a restart, where Faust
        resumes and seeks the partition while its fetcher is already running). Until a
        record of the gap, or the record after it, is read again, the partition decides
        nothing by timeout, and records past the gap are held (:meth:`held`): they come
        again after the gap's. A gap that comes back after one re-read is accepted."""
        hole = self._holes.get(partition)
        if hole is not None:
            if hole[0] <= offset <= hole[1]:
                del self._holes[partition]  # read again from the gap: filled, or truly empty
            elif offset > hole[1]:
                return None  # held: not read yet
        last = self._last.get(partition)
        self._last[partition] = offset if last is None else max(last, offset)
        known = None if last is None else last + 1  # the first offset not delivered yet
        if known is None or offset <= known or (partition, known) in self._retried:
            self.read_to(partition, offset + 1)
            return None
        self._retried[(partition, known)] = None
        if len(self._retried) > MAX_RETRIED:
            del self._retried[next(iter(self._retried))]
        self._holes[partition] = (known, offset)
        return known

    def held(self, partition: int, offset: int) -> bool:
        """Must the edge leave the record at ``offset`` alone (after :meth:`read`)? Yes while
        it lies past offsets being read again: the seek back delivers it once more, after
        them. Handled now, a cell would see its answers out of order, and decisions its
        in-order answers lead through (a disagreement job before a re-run agrees) would
        never be taken (seen after a restart on Apache Kafka: a lost disagreement job)."""
        hole = self._holes.get(partition)
        return hole is not None and offset >= hole[1]

    def _forget_retried(self, committed: Mapping[int, int]) -> None:
        """A gap starting below the committed offset cannot come back: after a reset Faust
        reads from the commit on, and the gate seeks back only to a gap past a record read."""
        if self._retried:
            for gap in [g for g in self._retried if g[1] < committed.get(g[0], 0)]:
                del self._retried[gap]

    def holes(self) -> dict[int, int]:
        """Partitions with a gap still being read again -> where it starts."""
        return {partition: hole[0] for partition, hole in self._holes.items()}

    def position(self, partition: int) -> int | None:
        """How far ``partition`` has been read (``None``: nothing known since the reset)."""
        return self._read.get(partition)

    def read_to(self, partition: int, position: int) -> None:
        if position > self._read.get(partition, 0):
            self._read[partition] = position

    def ready(self, partition: int, mark: int = 0) -> bool:
        """May a cell of ``partition`` be decided by timeout (on a tick carrying ``mark``)?"""
        resumed = self._resumed.get(partition)
        return (resumed is not None and partition not in self._holes
                and self._read.get(partition, 0) >= max(resumed, mark))


def tick_value(mark: int) -> bytes:
    return str(mark).encode()


def tick_mark(value: bytes | None) -> int:
    """A tick's mark (:func:`tick_value`); a value without one counts as 0 (the resume mark
    alone applies)."""
    try:
        return max(0, int(value or b"0"))
    except ValueError:
        return 0

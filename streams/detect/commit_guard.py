"""Faust commits past offsets its fetcher skipped (faust-streaming #606): not past a gap in re-read.

No input offset is committed past a gap the detect edge is still reading again.

Faust commits, per partition, one past the first run of consecutive acknowledged offsets,
and counts as acknowledged the offsets its fetcher went past without delivering
(``Consumer._add_gap``: meant for transaction markers and compacted records). The stream
acknowledges the records the edge holds past such a gap too (``take_events`` acks every
event of a batch). So while :class:`~streams.detect.backlog.SettleGate` reads skipped
offsets again (their records never reached the stream, their cells were never updated),
Faust's next commit went past them, and a kill before the re-read lost those answers
(issue 25 item 9a; ``tests/unit/streams/test_detect_commit_guard.py`` forces the window
with Faust's own bookkeeping).

:func:`guard_commits` makes Faust compute no commit for an input partition while it has an
open gap; its bookkeeping is left as it was (acknowledged offsets and gaps stay), so once
the gap is read again, or accepted as empty after one re-read, the next commit covers
everything. Faust keeps this step and its gaps in private members (faust-streaming 0.15; the test
checks it is there).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from streams.detect.backlog import SettleGate

#: set on a consumer whose commits are guarded (installed once per consumer)
_GUARDED = "_judgeflow_commit_guard"


def guard_commits(consumer: Any, topic: str, gate: SettleGate) -> None:
    """Wrap ``consumer._new_offset`` (Faust's "offset to commit for this partition"): None
    for a partition of ``topic`` with a gap still open in ``gate``."""
    if getattr(consumer, _GUARDED, False):
        return
    original: Callable[[Any], int | None] = consumer._new_offset

    def new_offset(tp: Any) -> int | None:
        if tp.topic != topic:
            return original(tp)
        if tp.partition in gate.holes():
            return None  # not now: asked again at the next commit interval
        # Records read again over the kept gap are acknowledged as delivered: they leave
        # Faust's gap first, or Faust would count them twice, and its run of consecutive
        # offsets stops at the first repeat.
        gaps = consumer._gap.get(tp)
        if gaps:
            for acked in set(consumer._acked[tp]):
                gaps.chop(acked, acked + 1)
        return original(tp)

    consumer._new_offset = new_offset
    setattr(consumer, _GUARDED, True)

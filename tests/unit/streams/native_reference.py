"""What the compiled detect core (native/, streams/detect/native.py) must return for a
record it takes: the Python path's step, in the compiled core's terms."""

from __future__ import annotations

from typing import Any

from streams.detect.faust_edge import bounded
from streams.detect.native import NativeStep
from streams.detect.state import CellState


def reference_answer(proc: Any, key: bytes | None, value: bytes | None, state: bytes | None,
                     topic: str, partition: int, offset: int, now: float) -> NativeStep:
    """The Python path (validate the record and its key, apply, decide, bound the state).
    Raises what it raises (``BadRecord``): the compiled core returns ``None`` for those, and
    for any step but a new answer that changes the cell."""
    answer = proc.validate_record(key, value)
    loaded = None if state is None else CellState.loads(state)
    step = proc.on_answer(answer, (topic, partition, offset), loaded, now)
    assert step.changed and step.state is not None, step.note
    new_state, raw = bounded(step.state)
    assert all(e.key == key for e in step.emits)
    return (str(step.note), raw, new_state.first_seen, new_state.decided_at,
            new_state.partition, tuple((e.kind, e.value, e.label) for e in step.emits))

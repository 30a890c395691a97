"""One batch of detect inputs, applied in order against a working copy of the touched cells.

Pure: the Faust edge reads stored cells through ``load``, feeds every record through
:meth:`Batch.record` (or a validated answer through :meth:`Batch.answer`) and every tick
through :meth:`Batch.tick`, then writes each changed cell once (:attr:`Batch.changed`) and
sends the outputs (:attr:`Batch.emits`) together, so that the producer forms large batches.
Applying events one by one and storing after each gives the same outputs and the same final
cells (tested).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from schemas.chart_review import AgentAnswer
from streams.detect.processor import DetectProcessor, Emit, Source, Step
from streams.detect.state import CellState, StepNote


@dataclass(slots=True)
class Changed:
    """A cell the batch changed: its new state (None: purged) and stored bytes."""

    state: CellState | None
    #: The input partition of the event that last changed the cell (its changelog partition).
    partition: int
    raw: bytes = b""


def encoded(state: CellState) -> tuple[CellState, bytes]:
    return state, state.dumps()


@dataclass
class Batch:
    proc: DetectProcessor
    load: Callable[[bytes], CellState | None]
    #: Encodes a new state, trimming or refusing it (``BadRecord``) when it is too large;
    #: runs before the step is taken, so a refused event changes nothing and is dead-lettered.
    bound: Callable[[CellState], tuple[CellState, bytes]] = encoded
    changed: dict[bytes, Changed] = field(default_factory=dict)
    #: Every key touched by the batch (a step may leave its cell unchanged).
    touched: set[bytes] = field(default_factory=set)
    emits: list[tuple[Emit, StepNote]] = field(default_factory=list)

    def _state(self, key: bytes) -> CellState | None:
        hit = self.changed.get(key)
        return hit.state if hit is not None else self.load(key)

    def _take(self, key: bytes, partition: int, step: Step) -> Step:
        if step.changed:
            if step.state is None:
                self.changed[key] = Changed(None, partition)
            else:
                state, raw = self.bound(step.state)
                self.changed[key] = Changed(state, partition, raw)
        self.touched.add(key)
        note = step.note
        self.emits.extend([(e, note) for e in step.emits])
        return step

    def record(self, key: bytes | None, value: bytes | None, source: Source, now: float
               ) -> StepNote:
        """One answer record as read (its Kafka key and value); raises ``BadRecord`` for a
        record that belongs in the dead-letter topic."""
        return self.answer(self.proc.validate_record(key, value), source, now).note

    def answer(self, answer: AgentAnswer, source: Source, now: float) -> Step:
        key = answer.key.encode()
        return self._take(key, source[1],
                          self.proc.on_answer(answer, source, self._state(key), now))

    def tick(self, key: bytes, source: Source, now: float, *, settle_ready: bool = True
             ) -> Step:
        return self._take(key, source[1], self.proc.on_tick(self._state(key), source, now,
                                                            settle_ready=settle_ready))

"""One batch of detect inputs, applied in order against a working copy of the touched cells.

Pure: the Faust edge reads stored cells through ``load`` (decoded) and ``load_raw`` (their
stored bytes), feeds every record through :meth:`Batch.record` (or a validated answer through
:meth:`Batch.answer`) and every tick through :meth:`Batch.tick`, then writes each changed
cell once (:attr:`Batch.changed`) and sends the outputs (:attr:`Batch.emits`) together, so
that the producer forms large batches. Applying events one by one and storing after each
gives the same outputs and the same final cells (tested).

A record goes to the compiled core first (:mod:`streams.detect.native`), which works on
the cell's stored bytes; what it declines takes the Python path. Both give the same bytes,
so a cell may pass from one to the other at any step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from streams.detect.encode import stamp
from streams.detect.fastpath import PlainAnswer
from streams.detect.native import Core
from streams.detect.processor import DetectProcessor, Emit, Source, Step
from streams.detect.state import CellState, StepNote

#: The compiled core's notes as the Python path's members.
_NOTES = {note.value: note for note in StepNote}
#: When a cell is next due: first seen, decided at (None: pending), its partition.
Due = tuple[float, float | None, int]


class Changed:
    """A cell the batch changed: its stored bytes (``b""``: purged) and either the decoded
    state (the Python path) or only its due times (the compiled core's steps, decoded on
    first use of :attr:`state`, e.g. by a later Python step of the same batch)."""

    __slots__ = ("_state", "due", "partition", "raw")

    def __init__(self, state: CellState | None, partition: int, raw: bytes = b"",
                 due: Due | None = None) -> None:
        self._state = state
        #: The input partition of the event that last changed the cell (its changelog
        #: partition).
        self.partition = partition
        self.raw = raw
        self.due = due

    @property
    def state(self) -> CellState | None:
        if self._state is None and self.raw:
            self._state = CellState.loads(self.raw)
        return self._state

    @property
    def decoded(self) -> CellState | None:
        """The state if it is at hand (never decodes)."""
        return self._state

    def due_times(self) -> Due | None:
        """(first seen, decided at, partition), or None for a purged cell."""
        if self.due is not None:
            return self.due
        state = self.state
        return None if state is None else (state.first_seen, state.decided_at, state.partition)


def encoded(state: CellState) -> tuple[CellState, bytes]:
    return state, state.dumps()


@dataclass
class Batch:
    proc: DetectProcessor
    load: Callable[[bytes], CellState | None]
    #: Encodes a new state, trimming or refusing it (``BadRecord``) when it is too large;
    #: runs before the step is taken, so a refused event changes nothing and is dead-lettered.
    bound: Callable[[CellState], tuple[CellState, bytes]] = encoded
    #: The compiled core and the stored bytes of a cell (both or neither).
    core: Core | None = None
    load_raw: Callable[[bytes], bytes | None] | None = None
    changed: dict[bytes, Changed] = field(default_factory=dict)
    #: Every key touched by the batch (a step may leave its cell unchanged).
    touched: set[bytes] = field(default_factory=set)
    emits: list[tuple[Emit, StepNote]] = field(default_factory=list)
    #: Records the compiled core declined (they took the Python path).
    declined: int = 0
    _now: float = field(default=float("nan"), repr=False)
    _stamp: str = field(default="", repr=False)

    def _state(self, key: bytes) -> CellState | None:
        hit = self.changed.get(key)
        return hit.state if hit is not None else self.load(key)

    def _take(self, key: bytes, partition: int, step: Step) -> Step:
        if step.changed:
            if step.state is None:
                change = Changed(None, partition)
            else:
                state, raw = self.bound(step.state)
                change = Changed(state, partition, raw)
            self.changed[key] = change
        self.touched.add(key)
        if step.emits:
            note = step.note
            self.emits.extend([(e, note) for e in step.emits])
        return step

    def record(self, key: bytes | None, value: bytes | None, source: Source, now: float
               ) -> StepNote:
        """One answer record as read (its Kafka key and value): the compiled core's step,
        or the Python path's (which raises ``BadRecord`` for a record that belongs in the
        dead-letter topic)."""
        core, load_raw = self.core, self.load_raw
        if core is not None and load_raw is not None and key is not None:
            hit = self.changed.get(key)
            raw = load_raw(key) if hit is None else hit.raw or None
            if now != self._now:  # one clock reading per batch: formatted once
                self._now, self._stamp = now, stamp(now)
            got = core.answer(key, value, raw, source[0], source[1], source[2], now,
                              self._stamp)
            if got is not None:
                name, new_raw, first_seen, decided_at, partition, emits = got
                self.changed[key] = Changed(None, source[1], new_raw,
                                            (first_seen, decided_at, partition))
                self.touched.add(key)
                note = _NOTES[name]
                if emits:
                    self.emits.extend([(Emit(kind, key, out, label), note)  # type: ignore[arg-type]
                                       for kind, out, label in emits])
                return note
            self.declined += 1
        return self.answer(self.proc.validate_record(key, value), source, now).note

    def answer(self, answer: PlainAnswer, source: Source, now: float) -> Step:
        key = answer.key.encode()
        return self._take(key, source[1],
                          self.proc.on_answer(answer, source, self._state(key), now))

    def tick(self, key: bytes, source: Source, now: float, *, settle_ready: bool = True
             ) -> Step:
        return self._take(key, source[1], self.proc.on_tick(self._state(key), source, now,
                                                            settle_ready=settle_ready))

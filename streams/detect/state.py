"""The per-cell state machine of the detector. Pure: the caller passes ``now`` and receives
what to emit; the Faust edge only stores the state and sends the outputs.

A cell is *pending* until every expected agent has answered (decide now) or the settle window
has passed (decide with what it has). After a decision the cell is kept, *decided*, for
``retention_seconds`` so that a superseding re-run can be re-decided against the other
agents' answers, then purged, so state does not grow without bound.

Crash safety: the state remembers which input record (topic/partition/offset) triggered the
current decision and the output records that decision produced. If that same record is
delivered again (a worker died after writing its state but before its offsets were
committed), the outputs are re-sent with the same ids rather than lost. Duplicate
``event_id``s delivered at other offsets are dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

import orjson

from schemas.chart_review import AgentAnswer

MAX_SEEN_EVENTS = 256
MAX_HISTORY = 4


class StepNote(StrEnum):
    """What one input did to its cell. Callers branch on it (a redelivery re-sends outputs
    without counting a new decision; a duplicate leaves the state unwritten)."""

    NEW = "new"  # an agent's first answer in the cell
    SUPERSEDED = "superseded"  # a later answer of an agent replaced its earlier one
    DUPLICATE = "duplicate"  # an event id already seen (at another offset): dropped
    STALE = "stale"  # older than the agent's stored answer: ignored
    REDELIVERED = "redelivered"  # the record behind a stored decision again: re-send its outputs
    UNCHANGED = "unchanged"  # decided again on the same inputs: nothing to send
    SETTLED = "settled"  # the settle window passed: decided with the answers present
    PURGED = "purged"  # retention passed: the state is deleted
    TICK_EARLY = "tick-early"  # a tick before anything is due
    TICK_UNKNOWN = "tick-unknown"  # a tick for a cell with no state


# Python 3.11 reads an enum member off its class through a descriptor (about 150-200 ns, the
# cost of building a small record): the detect core names its notes once, here.
NEW, SUPERSEDED, DUPLICATE = StepNote.NEW, StepNote.SUPERSEDED, StepNote.DUPLICATE
STALE, REDELIVERED, UNCHANGED = StepNote.STALE, StepNote.REDELIVERED, StepNote.UNCHANGED
SETTLED, PURGED = StepNote.SETTLED, StepNote.PURGED
TICK_EARLY, TICK_UNKNOWN = StepNote.TICK_EARLY, StepNote.TICK_UNKNOWN


@dataclass(frozen=True)
class DetectConfig:
    """The detector's configuration: who must answer, how long a cell waits and is kept."""

    expected_agents: tuple[str, ...]
    settle_seconds: float
    retention_seconds: float
    low_confidence_threshold: float
    #: Tasks whose rubric is answered by a different set of agents.
    agents_by_task: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def agents_for(self, task_id: str) -> tuple[str, ...]:
        return tuple(self.agents_by_task.get(task_id, self.expected_agents))

    def complete(self, task_id: str, answers: Mapping[str, object]) -> bool:
        """Has every agent expected for the task answered?"""
        for agent in self.agents_by_task.get(task_id, self.expected_agents):
            if agent not in answers:
                return False
        return True


#: The records of the hot path are dataclasses with slots, not frozen ones: a frozen
#: dataclass sets each field through ``object.__setattr__`` (4x the cost of building one;
#: several are built per event). They are never mutated: a change builds a new one.
@dataclass(slots=True)
class CellState:
    first_seen: float
    #: The input partition the cell lives in (settle ticks are sent to the same partition).
    partition: int = -1
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    seen_events: tuple[str, ...] = ()
    decided_at: float | None = None
    last_inputs_id: str | None = None
    #: The last few decisions: ``(trigger, outputs)`` where trigger is the
    #: ``(topic, partition, offset)`` of the record that caused it and outputs the job and
    #: outcome records (JSON objects) it produced.
    history: tuple[tuple[tuple[str, int, int], tuple[dict[str, Any], ...]], ...] = ()
    #: The validated models of ``answers`` this process has at hand (not stored: a cell read
    #: back from its bytes validates its answers again when it is decided).
    models: dict[str, AgentAnswer] = field(default_factory=dict, compare=False, repr=False)

    def outputs_for(self, source: tuple[str, int, int]) -> tuple[dict[str, Any], ...] | None:
        for trigger, outputs in self.history:
            if trigger == source:
                return outputs
        return None

    @property
    def decided(self) -> bool:
        return self.decided_at is not None

    def with_(self, answers: dict[str, dict[str, Any]], seen_events: tuple[str, ...],
              models: dict[str, AgentAnswer]) -> CellState:
        """A copy with new answers and seen events (``dataclasses.replace`` costs several
        times as much on this hot path)."""
        return CellState(self.first_seen, self.partition, answers, seen_events,
                         self.decided_at, self.last_inputs_id, self.history, models)

    def answer_models(self) -> list[AgentAnswer]:
        """The answers as models, in stored order (validated again unless at hand)."""
        models = self.models
        return [models.get(agent) or AgentAnswer.model_validate(stored)
                for agent, stored in self.answers.items()]

    def dumps(self) -> bytes:
        """The stored form (the changelog record): plain JSON. No compression here: it ran
        on every write; :mod:`streams.detect.store` compresses cold cells in groups."""
        return orjson.dumps({
            "first_seen": self.first_seen, "partition": self.partition, "answers": self.answers,
            "seen_events": list(self.seen_events), "decided_at": self.decided_at,
            "last_inputs_id": self.last_inputs_id,
            "history": [[list(t), list(o)] for t, o in self.history],
        })

    @classmethod
    def loads(cls, raw: bytes) -> CellState:
        d = orjson.loads(raw)
        history = tuple(((t[0], int(t[1]), int(t[2])), tuple(o)) for t, o in d["history"])
        return cls(first_seen=d["first_seen"], partition=d["partition"], answers=d["answers"],
                   seen_events=tuple(d["seen_events"]), decided_at=d["decided_at"],
                   last_inputs_id=d["last_inputs_id"], history=history)


def _later(new: AgentAnswer, old: dict[str, Any]) -> bool:
    """Does ``new`` supersede the stored answer of the same agent?"""
    old_at = datetime.fromisoformat(str(old["emitted_at"]))  # stored as pydantic wrote it
    if new.emitted_at != old_at:
        return new.emitted_at > old_at
    return new.run_id > str(old["run_id"])


@dataclass(slots=True)
class Applied:
    """Result of applying one answer: the new state and whether the cell must be decided."""

    state: CellState
    decide: bool
    note: StepNote  # NEW, SUPERSEDED, DUPLICATE, STALE or REDELIVERED


def apply_answer(state: CellState | None, answer: AgentAnswer, source: tuple[str, int, int],
                 now: float, cfg: DetectConfig) -> Applied:
    if state is None:  # a cell's first answer (half of all events): one state built, not two
        first = {answer.agent_id: answer.model_dump(mode="json")}
        return Applied(CellState(now, source[1], first, (answer.event_id,),
                                 models={answer.agent_id: answer}),
                       cfg.complete(answer.task_id, first), NEW)
    if state.outputs_for(source) is not None:
        return Applied(state, False, REDELIVERED)
    if answer.event_id in state.seen_events:
        return Applied(state, False, DUPLICATE)
    seen = (*state.seen_events, answer.event_id)[-MAX_SEEN_EVENTS:]
    current = state.answers.get(answer.agent_id)
    if current is not None and not _later(answer, current):
        return Applied(state.with_(state.answers, seen, state.models), False, STALE)
    answers = {**state.answers, answer.agent_id: answer.model_dump(mode="json")}
    new = state.with_(answers, seen, {**state.models, answer.agent_id: answer})
    complete = cfg.complete(answer.task_id, answers)
    note = SUPERSEDED if current is not None else NEW
    # A decided cell is re-decided on any change; a pending one once every agent answered.
    return Applied(new, complete or new.decided, note)


def settle_due(state: CellState, now: float, cfg: DetectConfig) -> bool:
    return not state.decided and now - state.first_seen >= cfg.settle_seconds


def purge_due(state: CellState, now: float, cfg: DetectConfig) -> bool:
    return state.decided_at is not None and now - state.decided_at >= cfg.retention_seconds


def record_decision(state: CellState, inputs_id: str, source: tuple[str, int, int],
                    outputs: tuple[dict[str, Any], ...], now: float) -> CellState:
    history = (*state.history, (source, outputs))[-MAX_HISTORY:]
    return CellState(state.first_seen, state.partition, state.answers, state.seen_events, now,
                     inputs_id, history, state.models)


class DueIndex:
    """When each cell next needs a settle tick: its settle time while pending, its purge
    time once decided. The timer reads this instead of decoding the whole table on every
    tick; a periodic full rebuild from the table covers cells restored from the changelog
    (after a restart or rebalance), which never pass through the stream until touched."""

    def __init__(self, cfg: DetectConfig) -> None:
        self.cfg = cfg
        self._due: dict[bytes, tuple[float, int, bool]] = {}

    def note(self, key: bytes, state: CellState | None) -> None:
        """When ``state``'s cell is next due (None: the cell is gone)."""
        if state is None:
            self._due.pop(key, None)
        elif state.decided_at is None:
            self._due[key] = (state.first_seen + self.cfg.settle_seconds, state.partition, True)
        else:
            self._due[key] = (state.decided_at + self.cfg.retention_seconds, state.partition,
                              False)

    def overdue(self, now: float) -> list[tuple[bytes, int]]:
        return [(key, part) for key, (at, part, _) in self._due.items() if at <= now]

    def pending(self) -> int:
        return sum(1 for _, _, pending in self._due.values() if pending)

    def __len__(self) -> int:
        return len(self._due)

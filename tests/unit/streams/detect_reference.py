"""FROZEN reference of the detector's pure path (streams/detect/processor.py + state.py as of
commit 1c67862, before the hot path). Test-only: the differential tests compare the live
processor with this one byte for byte. Do not edit except to follow a deliberate change of
semantics (and say so in the commit).
"""
# ruff: noqa
# mypy: ignore-errors

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import orjson
from pydantic import ValidationError

from schemas.chart_review import AgentAnswer, CellOutcome, JudgeJob, SourceRef, cell_key
from schemas.errors import describe_record
from schemas.skill import Skill
from schemas.ids import derive_id
from streams.detect.decide import Decision, decide
from streams.detect.normalize import Invalid, to_json_value
from streams.detect.state import DetectConfig
from streams.errors import BadRecord

log = logging.getLogger(__name__)

MAX_SEEN_EVENTS = 256
MAX_HISTORY = 4


@dataclass(frozen=True)
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

    def outputs_for(self, source: tuple[str, int, int]) -> tuple[dict[str, Any], ...] | None:
        for trigger, outputs in self.history:
            if trigger == source:
                return outputs
        return None

    @property
    def decided(self) -> bool:
        return self.decided_at is not None

    def answer_models(self) -> list[AgentAnswer]:
        return [AgentAnswer.model_validate(a) for a in self.answers.values()]

    def dumps(self) -> bytes:
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


@dataclass(frozen=True)
class Applied:
    """Result of applying one answer: the new state and whether the cell must be decided."""

    state: CellState
    decide: bool
    note: str  # "new", "duplicate", "stale", "superseded", "redelivered"


def apply_answer(state: CellState | None, answer: AgentAnswer, source: tuple[str, int, int],
                 now: float, cfg: DetectConfig) -> Applied:
    if state is None:
        state = CellState(first_seen=now, partition=source[1])
    if state.outputs_for(source) is not None:
        return Applied(state, False, "redelivered")
    if answer.event_id in state.seen_events:
        return Applied(state, False, "duplicate")
    seen = (*state.seen_events, answer.event_id)[-MAX_SEEN_EVENTS:]
    current = state.answers.get(answer.agent_id)
    if current is not None and not _later(answer, current):
        return Applied(replace(state, seen_events=seen), False, "stale")
    answers = {**state.answers, answer.agent_id: answer.model_dump(mode="json")}
    new = replace(state, answers=answers, seen_events=seen)
    complete = all(a in answers for a in cfg.agents_for(answer.task_id))
    note = "superseded" if current is not None else "new"
    # A decided cell is re-decided on any change; a pending one once every agent answered.
    return Applied(new, complete or new.decided, note)


def settle_due(state: CellState, now: float, cfg: DetectConfig) -> bool:
    return not state.decided and now - state.first_seen >= cfg.settle_seconds


def purge_due(state: CellState, now: float, cfg: DetectConfig) -> bool:
    return state.decided_at is not None and now - state.decided_at >= cfg.retention_seconds


def record_decision(state: CellState, inputs_id: str, source: tuple[str, int, int],
                    outputs: tuple[dict[str, Any], ...], now: float) -> CellState:
    history = (*state.history, (source, outputs))[-MAX_HISTORY:]
    return replace(state, decided_at=now, last_inputs_id=inputs_id, history=history)


class DueIndex:
    """When each cell next needs a settle tick: its settle time while pending, its purge
    time once decided. The timer reads this instead of decoding the whole table on every
    tick; a periodic full rebuild from the table covers cells restored from the changelog
    (after a restart or rebalance), which never pass through the agent until touched."""

    def __init__(self, cfg: DetectConfig) -> None:
        self.cfg = cfg
        self._due: dict[bytes, tuple[float, int, bool]] = {}

    def note(self, key: bytes, state: CellState | None) -> None:
        if state is None:
            self._due.pop(key, None)
        elif state.decided_at is None:
            self._due[key] = (state.first_seen + self.cfg.settle_seconds, state.partition, True)
        else:
            self._due[key] = (state.decided_at + self.cfg.retention_seconds, state.partition,
                              False)

    def rebuild(self, items: Iterable[tuple[bytes, bytes]]) -> None:
        self._due.clear()
        for key, raw in items:
            self.note(key, CellState.loads(raw))

    def overdue(self, now: float) -> list[tuple[bytes, int]]:
        return [(key, part) for key, (at, part, _) in self._due.items() if at <= now]

    def pending(self) -> int:
        return sum(1 for _, _, pending in self._due.values() if pending)

    def __len__(self) -> int:
        return len(self._due)

log = logging.getLogger(__name__)

Source = tuple[str, int, int]


@dataclass(frozen=True)
class Emit:
    kind: str  # "job" | "outcome"
    key: bytes
    value: bytes


@dataclass(frozen=True)
class Step:
    """What to do after one input: store ``state`` (``None`` = delete) and send ``emits``."""

    state: CellState | None
    emits: tuple[Emit, ...]
    note: str
    changed: bool = True


def parse_answer(raw: bytes | None) -> AgentAnswer:
    if raw is None:
        raise BadRecord("invalid_json", "record has no value")
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BadRecord("invalid_json", f"value is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadRecord("invalid_json", f"value is a JSON {type(data).__name__}, not an object")
    try:
        return AgentAnswer.model_validate(data)
    except ValidationError as exc:
        # the dead-letter wording (types and paths only) is the one of schemas.errors
        raise BadRecord("schema_error", f"AgentAnswer invalid: {describe_record(exc)}") from None


def _iso(now: float) -> datetime:
    return datetime.fromtimestamp(now, UTC)


class DetectProcessor:
    def __init__(self, skill: Skill, cfg: DetectConfig) -> None:
        self.skill = skill
        self.cfg = cfg

    def validate(self, value: bytes | None) -> AgentAnswer:
        """Parse and check one record; :class:`BadRecord` means it belongs in the DLQ."""
        answer = parse_answer(value)
        if self.skill.criterion(answer.field_id) is None:
            raise BadRecord("unknown_criterion",
                            f"the answer's field_id is not a criterion of skill "
                            f"{self.skill.name!r}")
        return answer

    def on_answer(self, answer: AgentAnswer, source: Source, state: CellState | None,
                  now: float) -> Step:
        applied = apply_answer(state, answer, source, now, self.cfg)
        if applied.note == "redelivered":
            outputs = applied.state.outputs_for(source) or ()
            return Step(applied.state, self._emits(outputs), "redelivered", changed=False)
        if not applied.decide:
            return Step(applied.state, (), applied.note, changed=applied.note != "duplicate")
        return self._decide(applied.state, source, now, by_timeout=False, note=applied.note)

    def on_tick(self, state: CellState | None, source: Source, now: float) -> Step:
        if state is None:
            return Step(None, (), "tick-unknown", changed=False)
        outputs = state.outputs_for(source)
        if outputs is not None:
            return Step(state, self._emits(outputs), "redelivered", changed=False)
        if purge_due(state, now, self.cfg):
            return Step(None, (), "purged")
        if settle_due(state, now, self.cfg):
            return self._decide(state, source, now, by_timeout=True, note="settled")
        return Step(state, (), "tick-early", changed=False)

    def _decide(self, state: CellState, source: Source, now: float, *, by_timeout: bool,
                note: str) -> Step:
        answers = state.answer_models()
        first = answers[0]
        criterion = self.skill.criterion(first.field_id)
        assert criterion is not None  # checked on entry
        decision = decide(answers, criterion.answer_schema, self.cfg.agents_for(first.task_id),
                          self.cfg.low_confidence_threshold)
        if decision.inputs_id == state.last_inputs_id:
            return Step(state, (), "unchanged")
        outputs = self._outputs(decision, source, now, by_timeout)
        new_state = record_decision(state, decision.inputs_id, source, outputs, now)
        return Step(new_state, self._emits(outputs), note)

    def _outputs(self, d: Decision, source: Source, now: float,
                 by_timeout: bool) -> tuple[dict[str, Any], ...]:
        a0 = d.answers[0].answer
        ids = {"task_id": a0.task_id, "patient_id": a0.patient_id, "field_id": a0.field_id}
        out: list[dict[str, Any]] = []
        job_id = d.job_id
        if d.job_kind is not None and job_id is not None:
            job = JudgeJob(
                job_id=job_id, kind=d.job_kind, **ids,
                answers=tuple(n.answer for n in d.answers),
                normalized=tuple(to_json_value(n.canonical) for n in d.answers),
                reasons=d.reasons, detected_at=_iso(now),
                source=SourceRef(topic=source[0], partition=source[1], offset=source[2]),
                missing_agents=d.missing_agents, kinds_applicable=d.kinds_applicable,
            )
            out.append({"kind": "job", "record": job.model_dump(mode="json")})
        outcome = CellOutcome(
            outcome_id=derive_id("outcome", d.inputs_id), outcome=d.outcome, **ids,
            agents=tuple(n.answer.agent_id for n in d.answers), missing_agents=d.missing_agents,
            job_id=job_id, job_kind=d.job_kind, reasons=d.reasons, decided_at=_iso(now),
            settled_by_timeout=by_timeout, agreed_answer=_agreed(d),
        )
        out.append({"kind": "outcome", "record": outcome.model_dump(mode="json")})
        return tuple(out)

    @staticmethod
    def _emits(outputs: tuple[dict[str, Any], ...]) -> tuple[Emit, ...]:
        emits = []
        for item in outputs:
            rec = item["record"]
            key = cell_key(rec["task_id"], rec["patient_id"], rec["field_id"]).encode()
            emits.append(Emit(item["kind"], key, orjson.dumps(rec)))
        return tuple(emits)


def _agreed(d: Decision) -> Any:
    """The agreed answer as ``Decision.agreed_answer`` computed it before the hot path cached
    normal forms (2026-12-01: the live one now reads the cached JSON value)."""
    if d.job_kind not in (None, "type_drift") or not d.answers:
        return None
    canon = d.answers[0].canonical
    return None if isinstance(canon, Invalid) else to_json_value(canon)

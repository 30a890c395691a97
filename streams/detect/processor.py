"""Detect: bytes in, records out. No Kafka here; the Faust agent feeds it and sends results.

:class:`DetectProcessor` turns one input record (an agent answer or a settle tick) plus the
cell's stored state into the new state and the records to emit. ``now`` is passed in.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson
from pydantic import ValidationError

from schemas.chart_review import AgentAnswer, CellOutcome, JudgeJob, SourceRef, cell_key
from schemas.skill import Skill
from streams import limits
from streams.detect.decide import Decision, decide, derive_id
from streams.detect.normalize import to_json_value
from streams.detect.state import (
    CellState,
    Settle,
    apply_answer,
    purge_due,
    record_decision,
    settle_due,
)
from streams.errors import BadRecord

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
        # Field locations and messages only: never echo the input values (may be PHI).
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '<root>'}: {e['msg']}"
                             for e in exc.errors(include_input=False))
        raise BadRecord("schema_error", f"AgentAnswer invalid: {problems}") from None


def _iso(now: float) -> datetime:
    return datetime.fromtimestamp(now, UTC)


class DetectProcessor:
    def __init__(self, skill: Skill, cfg: Settle) -> None:
        self.skill = skill
        self.cfg = cfg

    def validate(self, value: bytes | None) -> AgentAnswer:
        """Parse and check one record; :class:`BadRecord` means it belongs in the DLQ."""
        size = len(value or b"")
        if size > limits.MAX_ANSWER_BYTES:
            raise BadRecord("oversized", f"answer of {size} bytes exceeds the limit of "
                            f"{limits.MAX_ANSWER_BYTES} bytes")
        answer = parse_answer(value)
        problems = limits.text_problems(answer)
        if problems:
            raise BadRecord("oversized", "; ".join(problems))
        if self.skill.criterion(answer.field_id) is None:
            raise BadRecord("unknown_criterion", self.skill.unavailable_reason(answer.field_id))
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
            settled_by_timeout=by_timeout,
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

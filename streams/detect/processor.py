"""Detect: bytes in, records out. No Kafka here; the Faust edge feeds it and sends results.

:class:`DetectProcessor` turns one input record (an agent answer or a settle tick) plus the
cell's stored state into the new state and the records to emit. ``now`` is passed in.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import orjson

from schemas.chart_review import (
    AgentAnswer,
    CellOutcome,
    JudgeJob,
    SourceRef,
    cell_key,
)
from schemas.ids import derive_id
from schemas.skill import Skill
from streams import limits
from streams.decode import decode_record
from streams.detect.decide import Decision, decide
from streams.detect.state import (
    DUPLICATE,
    PURGED,
    REDELIVERED,
    SETTLED,
    TICK_EARLY,
    TICK_UNKNOWN,
    UNCHANGED,
    CellState,
    DetectConfig,
    StepNote,
    apply_answer,
    purge_due,
    record_decision,
    settle_due,
)
from streams.errors import BadRecord

log = logging.getLogger(__name__)

Source = tuple[str, int, int]
#: Which output topic an emitted record goes to.
EmitKind = Literal["job", "outcome"]


@dataclass(slots=True)
class Emit:
    kind: EmitKind
    key: bytes
    value: bytes
    #: The outcome kind of an outcome record (for metrics without decoding ``value``).
    label: str = ""


@dataclass(slots=True)
class Step:
    """What to do after one input: store ``state`` (``None`` = delete) and send ``emits``."""

    state: CellState | None
    emits: tuple[Emit, ...]
    note: StepNote
    changed: bool = True


class DetectProcessor:
    def __init__(self, skill: Skill, cfg: DetectConfig) -> None:
        self.skill = skill
        self.cfg = cfg

    def validate(self, value: bytes | None) -> AgentAnswer:
        """Parse and check one record; :class:`BadRecord` means it belongs in the DLQ."""
        answer = decode_record(AgentAnswer, value)
        problems = limits.text_problems(answer)
        if problems:
            raise BadRecord("oversized", "; ".join(problems))
        if self.skill.criterion(answer.field_id) is None:
            raise BadRecord("unknown_criterion", self.skill.unavailable_reason(answer.field_id))
        return answer

    def validate_record(self, key: bytes | None, value: bytes | None) -> AgentAnswer:
        """:meth:`validate`, then the record's key must be the answer's cell key: Kafka
        partitions by key, so a record keyed otherwise would be decided in another
        partition's copy of its cell (with several workers, the cell's state would split)."""
        answer = self.validate(value)
        if key != answer.key.encode():
            raise BadRecord("key_mismatch", "the record has no key; answers are keyed by "
                            "their cell (task_id|patient_id|field_id)" if key is None else
                            "the record key is not the answer's cell key "
                            "(task_id|patient_id|field_id)")
        return answer

    def on_answer(self, answer: AgentAnswer, source: Source, state: CellState | None,
                  now: float) -> Step:
        applied = apply_answer(state, answer, source, now, self.cfg)
        note = applied.note
        if note is REDELIVERED:
            outputs = applied.state.outputs_for(source) or ()
            return Step(applied.state, self._emits(outputs), REDELIVERED, changed=False)
        if not applied.decide:
            return Step(applied.state, (), note, changed=note is not DUPLICATE)
        return self._decide(applied.state, source, now, by_timeout=False, note=note)

    def on_tick(self, state: CellState | None, source: Source, now: float, *,
                settle_ready: bool = True) -> Step:
        """``settle_ready``: the input partition's backlog has been read (SettleGate); until
        then a due settle waits (the tick decides nothing), purges and re-sends do not."""
        if state is None:
            return Step(None, (), TICK_UNKNOWN, changed=False)
        outputs = state.outputs_for(source)
        if outputs is not None:
            return Step(state, self._emits(outputs), REDELIVERED, changed=False)
        if purge_due(state, now, self.cfg):
            return Step(None, (), PURGED)
        if settle_ready and settle_due(state, now, self.cfg):
            return self._decide(state, source, now, by_timeout=True, note=SETTLED)
        return Step(state, (), TICK_EARLY, changed=False)

    def _decide(self, state: CellState, source: Source, now: float, *, by_timeout: bool,
                note: StepNote) -> Step:
        answers = state.answer_models()
        first = answers[0]
        criterion = self.skill.criterion(first.field_id)
        assert criterion is not None  # checked on entry
        decision = decide(answers, criterion.answer_schema, self.cfg.agents_for(first.task_id),
                          self.cfg.low_confidence_threshold)
        if decision.inputs_id == state.last_inputs_id:
            return Step(state, (), UNCHANGED)
        outputs = self._outputs(decision, source, now, by_timeout)
        new_state = record_decision(state, decision.inputs_id, source, outputs, now)
        return Step(new_state, self._emits(outputs), note)

    def _outputs(self, d: Decision, source: Source, now: float,
                 by_timeout: bool) -> tuple[dict[str, Any], ...]:
        """The decision's records, built by their models (``model_dump(mode="json")``)."""
        a0 = d.answers[0].answer
        ids = {"task_id": a0.task_id, "patient_id": a0.patient_id, "field_id": a0.field_id}
        at = datetime.fromtimestamp(now, UTC)
        out: list[dict[str, Any]] = []
        job_id = d.job_id
        if d.job_kind is not None and job_id is not None:
            job = JudgeJob(
                job_id=job_id, kind=d.job_kind, **ids,
                answers=tuple(n.answer for n in d.answers),
                normalized=tuple(n.json_value for n in d.answers), reasons=d.reasons,
                detected_at=at,
                source=SourceRef(topic=source[0], partition=source[1], offset=source[2]),
                missing_agents=d.missing_agents, kinds_applicable=d.kinds_applicable)
            out.append({"kind": "job", "record": job.model_dump(mode="json")})
        outcome = CellOutcome(
            outcome_id=derive_id("outcome", d.inputs_id), outcome=d.outcome, **ids,
            agents=tuple(n.answer.agent_id for n in d.answers), missing_agents=d.missing_agents,
            job_id=job_id, job_kind=d.job_kind, reasons=d.reasons, decided_at=at,
            settled_by_timeout=by_timeout, agreed_answer=d.agreed_answer)
        out.append({"kind": "outcome", "record": outcome.model_dump(mode="json")})
        return tuple(out)

    @staticmethod
    def _emits(outputs: tuple[dict[str, Any], ...]) -> tuple[Emit, ...]:
        if not outputs:
            return ()
        # the records of one decision name one cell: one key for all
        first = outputs[0]["record"]
        key = cell_key(first["task_id"], first["patient_id"], first["field_id"]).encode()
        return tuple([Emit(item["kind"], key, orjson.dumps(rec), rec.get("outcome", ""))
                      for item in outputs for rec in (item["record"],)])

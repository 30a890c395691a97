"""Decide a cell from the answers it has. Pure: no Kafka, no clock, no I/O.

Precedence (first that applies wins; all that apply are recorded in the reasons):
``disagreement`` (canonical values differ) > ``type_drift`` (same meaning, different
spelling) > ``low_confidence`` (some answer self-rated low) > ``agreement`` (no job).
A cell decided without every expected agent has outcome ``agent_missing``; its answers are
still checked, so a lone low-confidence answer yields a ``low_confidence`` job.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from schemas.chart_review import AgentAnswer, JobKind, OutcomeKind, cell_key
from schemas.ids import derive_id
from schemas.skill import AnswerSchema
from streams.detect.normalize import Invalid, canonicalize, format_signature, to_json_value


@dataclass(frozen=True, slots=True)
class Normalized:
    answer: AgentAnswer
    canonical: Any
    signature: str
    low_confidence: bool

    def fingerprint(self) -> str:
        """What the decision depends on for this agent (not event or run ids)."""
        return orjson.dumps(
            [self.answer.agent_id, self.signature, to_json_value(self.canonical),
             self.low_confidence]
        ).decode()


@dataclass(frozen=True, slots=True)
class Decision:
    outcome: OutcomeKind
    job_kind: JobKind | None
    kinds_applicable: tuple[JobKind, ...]
    reasons: tuple[str, ...]
    answers: tuple[Normalized, ...]
    missing_agents: tuple[str, ...]
    inputs_id: str

    @property
    def agreed_answer(self) -> Any:
        """The cell's answer when its agents agree (no job, or type drift only): their shared
        canonical value as JSON; None when they do not (or it is outside the schema)."""
        if self.job_kind not in (None, "type_drift") or not self.answers:
            return None
        canon = self.answers[0].canonical
        return None if isinstance(canon, Invalid) else to_json_value(canon)

    @property
    def job_id(self) -> str | None:
        return None if self.job_kind is None else derive_id("job", self.inputs_id, self.job_kind)


def is_low_confidence(answer: AgentAnswer, threshold: float) -> bool:
    conf = answer.confidence
    if isinstance(conf, str):
        return conf == "low"
    return conf < threshold


def normalize_answer(answer: AgentAnswer, schema: AnswerSchema, threshold: float) -> Normalized:
    canonical = canonicalize(answer.answer, schema)
    return Normalized(answer, canonical, format_signature(answer.answer),
                      is_low_confidence(answer, threshold))


def decide(
    answers: Sequence[AgentAnswer],
    schema: AnswerSchema,
    expected_agents: Sequence[str],
    low_confidence_threshold: float,
) -> Decision:
    """Decide one cell. ``answers`` holds at most one (the current) answer per agent."""
    if not answers:
        raise ValueError("a cell is decided from at least one answer")
    order = {agent: i for i, agent in enumerate(expected_agents)}
    ranked = sorted(answers, key=lambda a: (order.get(a.agent_id, len(order)), a.agent_id))
    norm = tuple(normalize_answer(a, schema, low_confidence_threshold) for a in ranked)
    present = {n.answer.agent_id for n in norm}
    missing = tuple(a for a in expected_agents if a not in present)

    kinds: list[JobKind] = []
    reasons: list[str] = []
    canon = [orjson.dumps(to_json_value(n.canonical)).decode() for n in norm]
    if len(set(canon)) > 1:
        kinds.append("disagreement")
        reasons.append("canonical answers differ: " + " vs ".join(
            f"{n.answer.agent_id}={c}" for n, c in zip(norm, canon, strict=True)))
    elif len({n.signature for n in norm}) > 1:
        kinds.append("type_drift")
        reasons.append("same canonical answer spelled differently: " + ", ".join(
            f"{n.answer.agent_id} wrote {n.signature}" for n in norm))
    low = [n.answer.agent_id for n in norm if n.low_confidence]
    if low:
        kinds.append("low_confidence")
        reasons.append("low confidence from " + ", ".join(low))
    if missing:
        reasons.append("settle window elapsed without " + ", ".join(missing))

    key = cell_key(ranked[0].task_id, ranked[0].patient_id, ranked[0].field_id)
    fingerprints = sorted(n.fingerprint() for n in norm)
    inputs_id = derive_id(key, *fingerprints, "missing=" + ",".join(missing))
    job_kind = kinds[0] if kinds else None
    outcome: OutcomeKind = "agent_missing" if missing else (job_kind or "agreement")
    return Decision(outcome, job_kind, tuple(kinds), tuple(reasons), norm, missing, inputs_id)

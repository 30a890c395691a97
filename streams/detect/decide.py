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
from streams.detect.normalize import Invalid, canonicalize, format_signature, json_form


@dataclass(slots=True)  # not frozen: built per answer per decision (never mutated)
class Normalized:
    answer: AgentAnswer
    canonical: Any
    signature: str
    low_confidence: bool
    #: ``json_form(canonical)`` as compact JSON (computed once: compared and hashed).
    canonical_json: str = ""
    #: ``json_form(canonical)``, the value the records carry (a scalar shared through the
    #: cache below; a list or dict is this answer's own).
    json_value: Any = None

    def fingerprint(self) -> str:
        """What the decision depends on for this agent (not event or run ids): the JSON of
        ``[agent_id, signature, canonical value, low_confidence]``, built from parts (orjson
        writes a list as its items' JSON joined by commas, so the bytes are the same)."""
        return (f"[{orjson.dumps(self.answer.agent_id).decode()},"
                f"{orjson.dumps(self.signature).decode()},{self.canonical_json},"
                f"{'true' if self.low_confidence else 'false'}]")


@dataclass(slots=True)
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
        first = self.answers[0]
        if isinstance(first.canonical, Invalid):
            return None
        value = first.json_value  # the job's "normalized" holds it too: a list gets a copy
        return json_form(first.canonical) if type(value) is list else value

    @property
    def job_id(self) -> str | None:
        return None if self.job_kind is None else derive_id("job", self.inputs_id, self.job_kind)


def is_low_confidence(answer: AgentAnswer, threshold: float) -> bool:
    conf = answer.confidence
    if isinstance(conf, str):
        return conf == "low"
    return conf < threshold


#: (canonical, signature, canonical JSON, JSON value) of scalar raw answers and short lists
#: of strings per schema: answers come from small vocabularies (true, "yes", "no_info"...).
#: Every part is immutable but the JSON value of a list or an invalid answer, which each
#: answer gets a fresh copy of (records must not share a mutable value).
#: Each entry holds its schema, so the schema's id in the key cannot be reused while cached.
_SCALARS: dict[tuple[int, Any], tuple[AnswerSchema, tuple[Any, str, str, Any]]] = {}
_SCALARS_MAX = 4096


def _normal_form(raw: Any, schema: AnswerSchema) -> tuple[Any, str, str, Any]:
    canonical = canonicalize(raw, schema)
    value = json_form(canonical)
    return canonical, format_signature(raw), orjson.dumps(value).decode(), value


_SCALAR_TYPES = frozenset((type(None), bool, str, int))


def _form_key(raw: Any) -> Any:
    """A cache key for the normal form of ``raw``, or None (not cached): scalars, and lists
    of strings (list answers repeat too: the same few medications, the same codes)."""
    kind = type(raw)
    if kind in _SCALAR_TYPES:
        # the type too (True == 1 == 1.0 as dict keys)
        return kind, raw
    if kind is float:
        return kind, repr(raw)  # a float's spelling (-0.0 == 0.0)
    if kind is list and len(raw) <= 16:
        for item in raw:
            if type(item) is not str:
                return None
        return kind, tuple(raw)
    return None


def normalize_answer(answer: AgentAnswer, schema: AnswerSchema, threshold: float) -> Normalized:
    raw = answer.answer
    form_key = _form_key(raw)
    if form_key is not None:
        key = (id(schema), form_key)
        hit = _SCALARS.get(key)
        if hit is not None and hit[0] is schema:
            form = hit[1]
        else:
            if len(_SCALARS) >= _SCALARS_MAX:
                _SCALARS.clear()
            form = _normal_form(raw, schema)
            _SCALARS[key] = (schema, form)
    else:
        form = _normal_form(raw, schema)
    canonical, signature, canonical_json, value = form
    if type(value) is list or type(value) is dict:  # the cached one stays unshared
        value = json_form(canonical)
    return Normalized(answer, canonical, signature, is_low_confidence(answer, threshold),
                      canonical_json, value)


#: The part of a decision that depends only on each agent's normal form (agent, canonical
#: JSON, signature, low confidence) and the missing agents: job kinds, reasons and the
#: sorted fingerprints. Cells repeat a few such shapes; the cell key and ids are per cell.
_SHAPES: dict[tuple[Any, ...], tuple[tuple[JobKind, ...], tuple[str, ...], tuple[str, ...]]] = {}
_SHAPES_MAX = 4096
_ORDERS: dict[tuple[str, ...], dict[str, int]] = {}


def _shape(norm: tuple[Normalized, ...], missing: tuple[str, ...]
           ) -> tuple[tuple[JobKind, ...], tuple[str, ...], tuple[str, ...]]:
    kinds: list[JobKind] = []
    reasons: list[str] = []
    canon = [n.canonical_json for n in norm]
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
    return tuple(kinds), tuple(reasons), tuple(sorted(n.fingerprint() for n in norm))


def _ranked(answers: Sequence[AgentAnswer], expected_agents: Sequence[str]
            ) -> list[AgentAnswer]:
    """Expected agents in their configured order, then any other agent by id."""
    agents = tuple(expected_agents)
    order = _ORDERS.get(agents)
    if order is None:
        if len(_ORDERS) >= 64:
            _ORDERS.clear()
        order = _ORDERS[agents] = {agent: i for i, agent in enumerate(agents)}
    if len(order) == len(agents):  # no agent listed twice
        by_agent = {a.agent_id: a for a in answers}
        ranked = [by_agent[agent] for agent in agents if agent in by_agent]
        if len(ranked) == len(answers):  # every answer from a distinct expected agent
            return ranked
    last = len(order)
    return sorted(answers, key=lambda a: (order.get(a.agent_id, last), a.agent_id))


def decide(
    answers: Sequence[AgentAnswer],
    schema: AnswerSchema,
    expected_agents: Sequence[str],
    low_confidence_threshold: float,
) -> Decision:
    """Decide one cell. ``answers`` holds at most one (the current) answer per agent."""
    if not answers:
        raise ValueError("a cell is decided from at least one answer")
    ranked = _ranked(answers, expected_agents)
    norm = tuple([normalize_answer(a, schema, low_confidence_threshold) for a in ranked])
    present = {n.answer.agent_id for n in norm}
    missing = tuple([a for a in expected_agents if a not in present])
    shape_key = (missing, *[(n.answer.agent_id, n.canonical_json, n.signature,
                             n.low_confidence) for n in norm])
    shape = _SHAPES.get(shape_key)
    if shape is None:
        if len(_SHAPES) >= _SHAPES_MAX:
            _SHAPES.clear()
        shape = _SHAPES[shape_key] = _shape(norm, missing)
    kinds, reasons, fingerprints = shape
    key = cell_key(ranked[0].task_id, ranked[0].patient_id, ranked[0].field_id)
    inputs_id = derive_id(key, *fingerprints, "missing=" + ",".join(missing))
    job_kind = kinds[0] if kinds else None
    outcome: OutcomeKind = "agent_missing" if missing else (job_kind or "agreement")
    return Decision(outcome, job_kind, kinds, reasons, norm, missing, inputs_id)

"""Chart-review contracts: AgentAnswer, JudgeJob, CellOutcome, JudgeAnalysis, JudgeResult.

Field names are the contract of DESIGN (docs/contracts.md); add fields, never rename.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator, model_validator

from schemas.base import AwareTime, BoundedId, Frozen, RecordId, SafeId

SCHEMA_VERSION = 1
#: Deepest nesting accepted in a free JSON value (``answer``, ``normalized``): deeper values
#: cannot be re-encoded by every component downstream (orjson stops at 254 levels).
MAX_JSON_DEPTH = 32

ConfidenceLabel = Literal["low", "medium", "high"]
JobKind = Literal["disagreement", "low_confidence", "type_drift"]
OutcomeKind = Literal["agreement", "disagreement", "low_confidence", "type_drift", "agent_missing"]


def cell_key(task_id: str, patient_id: str, field_id: str) -> str:
    """The key of every chart-review topic: all events of one cell meet in one partition."""
    return f"{task_id}|{patient_id}|{field_id}"


class CellKeyed:
    """Mixin: ``key`` (the cell key) of a record that names its task, patient and field.
    Adds no field (field order is part of each contract's JSON)."""

    __slots__ = ()
    if TYPE_CHECKING:
        task_id: str
        patient_id: str
        field_id: str

    @property
    def key(self) -> str:
        return cell_key(self.task_id, self.patient_id, self.field_id)


def check_json_value(value: Any) -> Any:
    """A free JSON value: finite numbers only, nesting at most :data:`MAX_JSON_DEPTH`."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise ValueError("NaN and Infinity are not JSON numbers")
        if isinstance(item, dict | list | tuple):
            if depth > MAX_JSON_DEPTH:
                raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels")
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return value


class Evidence(Frozen):
    note_id: SafeId
    quote: str
    offsets: tuple[int, int] | None = None

    @field_validator("offsets")
    @classmethod
    def _ordered(cls, v: tuple[int, int] | None) -> tuple[int, int] | None:
        if v is not None and not (0 <= v[0] <= v[1]):
            raise ValueError("offsets must be [start, end] with 0 <= start <= end")
        return v


class AgentAnswer(Frozen, CellKeyed):
    """One reviewer agent's answer to one criterion for one patient."""

    schema_version: int = SCHEMA_VERSION
    event_id: RecordId
    run_id: RecordId
    task_id: SafeId
    patient_id: SafeId
    field_id: SafeId
    agent_id: SafeId
    answer: Any = None
    evidence: tuple[Evidence, ...] = ()
    rationale: str = ""
    confidence: ConfidenceLabel | float = "medium"
    low_confidence_reason: str | None = None
    emitted_at: AwareTime

    @field_validator("confidence")
    @classmethod
    def _unit_interval(cls, v: str | float) -> str | float:
        if isinstance(v, float | int) and not isinstance(v, bool) and not 0.0 <= v <= 1.0:
            raise ValueError("numeric confidence must be within [0, 1]")
        return v

    _answer = field_validator("answer")(check_json_value)


class SourceRef(Frozen):
    """Where the triggering event of a decision was read from."""

    topic: str
    partition: int
    offset: int


class JudgeJob(Frozen, CellKeyed):
    job_id: RecordId
    kind: JobKind
    task_id: SafeId
    patient_id: SafeId
    field_id: SafeId
    #: The answers the decision used, agent A first (stable order: expected-agents order).
    answers: tuple[AgentAnswer, ...]
    #: Each answer's canonical value, same order as ``answers``.
    normalized: tuple[Any, ...]
    reasons: tuple[str, ...]
    detected_at: AwareTime
    source: SourceRef | None = None
    #: Agents expected but absent when the cell was decided (settle window elapsed).
    missing_agents: tuple[str, ...] = ()
    #: All kinds that applied, in precedence order; ``kind`` is the first.
    kinds_applicable: tuple[JobKind, ...] = ()

    _normalized = field_validator("normalized")(check_json_value)

    @model_validator(mode="after")
    def _answers_belong_to_the_cell(self) -> JudgeJob:
        """A job is judged against its own patient's notes: every answer must be of this
        task, patient and field (an answer of another patient would be judged wrongly)."""
        own = (self.task_id, self.patient_id, self.field_id)
        for i, a in enumerate(self.answers):
            if (a.task_id, a.patient_id, a.field_id) != own:
                raise ValueError(f"answers[{i}] belongs to another cell than the job's own")
        if len(self.normalized) != len(self.answers):
            raise ValueError("normalized must hold one value per answer")
        return self


class CellOutcome(Frozen, CellKeyed):
    """One record per decided cell, including cells that need no judge."""

    outcome_id: RecordId
    outcome: OutcomeKind
    task_id: SafeId
    patient_id: SafeId
    field_id: SafeId
    agents: tuple[str, ...]
    missing_agents: tuple[str, ...] = ()
    #: The job emitted for this cell, if any.
    job_id: RecordId | None = None
    job_kind: JobKind | None = None
    reasons: tuple[str, ...] = ()
    decided_at: AwareTime
    #: True when the cell was decided by the settle window rather than by the last answer.
    settled_by_timeout: bool = False
    #: The agents' shared canonical answer when they agree (no job, or type drift only);
    #: null otherwise. A gated criterion's judge reads its gate cell's answer from here.
    agreed_answer: Any = None

    _agreed_answer = field_validator("agreed_answer")(check_json_value)


class EvidencePointer(Frozen):
    note_id: BoundedId
    what_to_look_for: str
    offsets: tuple[int, int] | None = None


class JudgeAnalysis(Frozen):
    """Exactly the chart-review platform's judge contract."""

    suggested_answer: Any = None
    reasoning: str
    evidence_pointers: tuple[EvidencePointer, ...] = Field(default=(), max_length=3)
    agent_correctness: Literal["agent_a", "agent_b", "neither", "both", "n_a"]
    classification_hint: Literal[
        "guideline_gap", "agent_a_error", "agent_b_error", "true_ambiguity", "n_a"
    ]
    judge_confidence: ConfidenceLabel


class ValidationProblem(Frozen):
    type: str
    message: str
    action: Literal["repaired", "flagged", "fallback", "dropped"] = "flagged"


class NoteAccess(Frozen):
    """What one of the judge's chart tools showed it: a search (``pattern``, ``hits``; the
    windows it returned follow as entries with ``note_id`` and span), a span read, or a
    listing. Ids and offsets only, never note text."""

    tool: Literal["list_notes", "search_notes", "read_note"]
    note_id: BoundedId | None = None
    start: int | None = None
    end: int | None = None
    pattern: str | None = Field(default=None, max_length=200)
    hits: int | None = None


class Usage(Frozen):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cost_usd: float = 0.0
    llm_calls: int = 0


class JudgeResult(Frozen, CellKeyed):
    result_id: RecordId
    job_id: RecordId
    task_id: SafeId
    patient_id: SafeId
    field_id: SafeId
    kind: JobKind
    #: ``ok``; ``flagged`` = usable but a rule the repair round-trip could not fix (an
    #: invented quote, no usable pointer, contradictory fields) — the reviewer must check it;
    #: ``fallback`` = the judge could not analyse the cell.
    status: Literal["ok", "fallback", "flagged"]
    analysis: JudgeAnalysis
    validation: tuple[ValidationProblem, ...] = ()
    prompt_version: str
    provider: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    latency_ms: int = 0
    judged_at: AwareTime
    #: The result id of the latest result for this job under another prompt version (the
    #: one this result replaces, e.g. after a replay); None for a job's first result.
    supersedes: RecordId | None = None
    #: The reviewer agents of the job by id, in its order: the analysis's ``agent_a`` is
    #: ``agents[0]``, ``agent_b`` is ``agents[1]``; a third or later agent is named only here
    #: and in ``correct_agents``. Empty in results written before this field existed.
    agents: tuple[str, ...] = ()
    #: The agents the judge found right, by id: ``agent_correctness`` mapped onto ``agents``
    #: (``both`` = the first two, ``neither`` = none), plus every further agent whose
    #: canonical answer equals the suggested answer. None for ``n_a`` (and older results).
    correct_agents: tuple[str, ...] | None = None
    #: The agent ``classification_hint`` blames (``agent_a_error`` -> ``agents[0]``), by id.
    error_agent: str | None = None
    #: What the judge's chart tools showed it (agents/judge/tool_loop.py), in call order;
    #: empty when it was offered no tools.
    consulted: tuple[NoteAccess, ...] = ()


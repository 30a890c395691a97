"""Medkit debrief contracts: DebriefRequest (input) and CaseEvaluation (published result).

Field names follow DESIGN ("DebriefRequest", "CaseEvaluation"); add fields, never rename.
``CaseEvaluationInput`` is exactly what the ``render_case_evaluation`` tool returns; the
published ``CaseEvaluation`` is that payload plus the envelope judgeflow adds after
validating it in code. The tool's JSON Schema is generated from ``CaseEvaluationInput``
(:func:`render_case_evaluation_tool`), never written by hand.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from schemas.base import AwareTime, BoundedId, Frozen, RecordId, SafeId
from schemas.chart_review import Usage, ValidationProblem

SCHEMA_VERSION = 1

Domain = Literal["data_gathering", "clinical_management", "interpersonal", "safety_netting"]
DOMAINS: tuple[Domain, ...] = (
    "data_gathering", "clinical_management", "interpersonal", "safety_netting")
Verdict = Literal["excellent", "good", "satisfactory", "borderline", "clear-fail"]
Severity = Literal["low", "moderate", "high", "critical"]
Section = Literal["history", "tests", "treatments", "prescriptions", "escalations",
                  "safety_netting", "diagnosis", "any"]
BreachKind = Literal["contraindicated_drug", "missed_red_flag", "no_safety_netting", "other"]
Score = Field(ge=0.0, le=1.0)

# ---------------------------------------------------------------- request: the case


class Contraindication(Frozen):
    """A drug this simulated patient must not receive (allergy, age, interaction...)."""

    drug: str = Field(min_length=2)
    reason: str
    guideline_ref: str | None = None


class RedFlag(Frozen):
    """A finding of this case that requires escalation; met if any listed action was taken."""

    flag_id: SafeId
    finding: str
    escalation_any_of: tuple[str, ...] = Field(min_length=1)


class CaseSummary(Frozen):
    chief_complaint: str
    correct_diagnosis: str
    severity: Severity
    #: Overrides the default (severity high or critical) for the safety-netting rule.
    high_risk: bool | None = None
    contraindications: tuple[Contraindication, ...] = ()
    red_flags: tuple[RedFlag, ...] = ()

    @property
    def is_high_risk(self) -> bool:
        return self.high_risk if self.high_risk is not None else self.severity in ("high",
                                                                                   "critical")


class ChecklistHint(Frozen):
    """For the offline checklist grader: met if any phrase occurs in that encounter section
    (no phrases: met if the section is not empty). Section ``diagnosis`` additionally
    requires the submitted diagnosis to be correct."""

    section: Section = "any"
    any_of: tuple[str, ...] = ()


class RubricCriterion(Frozen):
    id: SafeId
    text: str
    weight: float = Field(default=1.0, gt=0)
    guideline_ref: str | None = None
    checklist: ChecklistHint | None = None


class CaseRubric(Frozen):
    data_gathering: tuple[RubricCriterion, ...] = ()
    clinical_management: tuple[RubricCriterion, ...] = ()
    interpersonal: tuple[RubricCriterion, ...] = ()
    safety_netting: tuple[RubricCriterion, ...] | None = None

    def by_domain(self) -> dict[Domain, tuple[RubricCriterion, ...]]:
        return {"data_gathering": self.data_gathering,
                "clinical_management": self.clinical_management,
                "interpersonal": self.interpersonal,
                "safety_netting": self.safety_netting or ()}

    @property
    def is_empty(self) -> bool:
        return not any(self.by_domain().values())

    @model_validator(mode="after")
    def _unique_ids(self) -> CaseRubric:
        ids = [c.id for crit in self.by_domain().values() for c in crit]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"criterion ids must be unique across domains: {dupes}")
        return self


class Guideline(Frozen):
    # camelCase registry field names are the simulator's contract.
    guidelineId: BoundedId
    title: str
    publisher: str | None = None
    year: int | None = None


class Recommendation(Frozen):
    recId: BoundedId
    guidelineId: BoundedId | None = None
    text: str
    strength: str | None = None


class RegistrySlice(Frozen):
    """The guidelines the rubric cites: context for the grader AND the citation allowlist."""

    guidelines: tuple[Guideline, ...] = ()
    recommendations: tuple[Recommendation, ...] = ()

    @property
    def rec_ids(self) -> frozenset[str]:
        return frozenset(r.recId for r in self.recommendations)


class HistoryItem(Frozen):
    question: str
    answer: str
    at: AwareTime | None = None


class OrderedTest(Frozen):
    name: str
    ordered_at: AwareTime
    result: str | None = None
    resulted_at: AwareTime | None = None


class Treatment(Frozen):
    name: str
    dose: str | None = None
    at: AwareTime | None = None


class Prescription(Frozen):
    drug: str
    dose: str | None = None
    route: str | None = None
    frequency: str | None = None
    at: AwareTime | None = None


class Escalation(Frozen):
    action: str
    at: AwareTime | None = None


class EncounterLog(Frozen):
    history: tuple[HistoryItem, ...] = ()
    tests: tuple[OrderedTest, ...] = ()
    treatments: tuple[Treatment, ...] = ()
    prescriptions: tuple[Prescription, ...] = ()
    escalations: tuple[Escalation, ...] = ()
    #: What the trainee told the patient about when and how to seek help again.
    safety_netting: tuple[str, ...] = ()
    submitted_diagnosis: str | None = None
    diagnosis_correct: bool
    started_at: AwareTime | None = None
    ended_at: AwareTime | None = None


class DebriefRequest(Frozen):
    """``medkit.debrief-requests.v1``, keyed by ``request_id``."""

    schema_version: int = SCHEMA_VERSION
    request_id: SafeId
    case_id: SafeId
    trainee_id: RecordId | None = None
    case_summary: CaseSummary
    #: Absent or empty: graded against the generic auto-rubric (``rubric_source: "auto"``).
    rubric: CaseRubric | None = None
    registry_slice: RegistrySlice = Field(default_factory=RegistrySlice)
    encounter_log: EncounterLog
    requested_at: AwareTime | None = None


# ---------------------------------------------------------------- the tool payload


class Rating(Frozen):
    score: float = Score
    verdict: Verdict


class DomainScores(Frozen):
    data_gathering: Rating
    clinical_management: Rating
    interpersonal: Rating
    safety_netting: Rating | None = None


class CriterionEvaluation(Frozen):
    criterion_id: BoundedId
    domain: Domain
    score: float = Score
    #: The specific observation behind the score, tied to this case.
    evidence: str
    #: Verbatim excerpts of the encounter log supporting the evidence.
    quotes: tuple[str, ...] = ()
    guideline_ref: str | None = None


class SafetyBreach(Frozen):
    kind: BreachKind
    description: str
    evidence: str | None = None


class CaseEvaluationInput(Frozen):
    """The ``render_case_evaluation`` tool input (what the attending returns)."""

    case_id: BoundedId
    global_rating: Rating
    domain_scores: DomainScores
    criteria: tuple[CriterionEvaluation, ...]
    highlights: tuple[str, ...]
    improvements: tuple[str, ...]
    narrative: str = Field(min_length=1)
    safety_breach: SafetyBreach | None = None


# ---------------------------------------------------------------- the published envelope


class DroppedCriterion(Frozen):
    criterion_id: BoundedId
    domain: Domain
    guideline_ref: str | None
    reason: Literal["unknown_citation", "missing_citation", "unknown_criterion"]


class VerdictCorrection(Frozen):
    #: ``"global"`` or a domain name.
    scope: str
    score: float
    model_verdict: str
    verdict: Verdict


class QuoteFlag(Frozen):
    criterion_id: BoundedId
    quote: str


#: The fixed line every evaluation carries; the UI shows it verbatim and may rely on it.
TRAINING_NOTICE = ("Training feedback on a simulated encounter only; not advice about the "
                   "care of any real patient.")


class ScoreFlag(Frozen):
    """A score the model claimed that differs from the one code recomputed."""

    #: ``"global"`` or a domain name.
    scope: str
    claimed: float
    recomputed: float


class CheckedEvaluation(CaseEvaluationInput):
    """The tool payload after validation in code: ``global_rating`` and ``domain_scores``
    are recomputed from the kept criteria with the rubric weights (bands applied to the
    recomputed scores); the model's own ratings are kept beside them."""

    claimed_global_rating: Rating | None = None
    claimed_domain_scores: DomainScores | None = None
    #: Scores whose claimed and recomputed values differ by more than the tolerance.
    score_flags: tuple[ScoreFlag, ...] = ()
    #: Criteria with no quote that occurs in the encounter log (evidence not specific).
    unquoted_criteria: tuple[str, ...] = ()
    training_notice: Literal[TRAINING_NOTICE] = TRAINING_NOTICE  # type: ignore[valid-type]


class CaseEvaluation(CheckedEvaluation):
    """``medkit.case-evaluations.v1``, keyed by ``request_id``: payload + envelope."""

    schema_version: int = SCHEMA_VERSION
    #: Deterministic from (request_id, prompt_version): consumers de-duplicate on it.
    evaluation_id: RecordId
    request_id: SafeId
    prompt_version: str
    provider: str
    model: str
    usage: Usage = Field(default_factory=Usage)
    rubric_source: Literal["authored", "auto"]
    dropped_criteria: tuple[DroppedCriterion, ...] = ()
    corrections: tuple[VerdictCorrection, ...] = ()
    #: recIds the authored rubric cites that the registry slice lacks.
    rubric_unknown_refs: tuple[str, ...] = ()
    unverified_quotes: tuple[QuoteFlag, ...] = ()
    #: Every breach found by code (``safety_breach`` is the one the narrative leads with).
    safety_findings: tuple[SafetyBreach, ...] = ()
    validation: tuple[ValidationProblem, ...] = ()
    latency_ms: int = 0
    evaluated_at: AwareTime
    #: The evaluation id of the latest evaluation of this request under another prompt
    #: version (the one this evaluation replaces); None for a request's first evaluation.
    supersedes: RecordId | None = None


# ---------------------------------------------------------------- the tool schema

TOOL_NAME = "render_case_evaluation"
LEGACY_TOOL_NAMES = frozenset({"render_case_grade"})
TOOL_FILE = "render_case_evaluation.tool.json"
TOOL_DESCRIPTION = (
    "Return the one structured debrief evaluation of this training encounter. Call it "
    "exactly once, after you have scored every rubric criterion.")

#: Keywords strict tool schemas do not accept; pydantic re-checks them after the call.
_UNSUPPORTED = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                          "multipleOf", "minLength", "maxLength", "pattern", "maxItems",
                          "default", "title", "minProperties", "maxProperties"})


def strict_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON Schema made strict-tool compatible: every object closed
    (``additionalProperties: false``) with every property required (optional ones are
    already nullable), and constraint keywords the strict grammar rejects removed."""
    return _strict(model.model_json_schema(mode="validation"))


def _strict(node: Any) -> Any:
    if isinstance(node, list):
        return [_strict(n) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _UNSUPPORTED or (key == "minItems" and value > 1):
            continue
        out[key] = (value if key in ("enum", "const", "required")
                    else {k: _strict(v) for k, v in value.items()}
                    if key in ("properties", "$defs") else _strict(value))
    if out.get("type") == "object" or "properties" in out:
        out["additionalProperties"] = False
        out["required"] = list(out.get("properties", {}))
    return out


def render_case_evaluation_tool() -> dict[str, Any]:
    """The tool definition sent to the model (checked in as ``schemas/json/TOOL_FILE``)."""
    return {"name": TOOL_NAME, "description": TOOL_DESCRIPTION, "strict": True,
            "input_schema": strict_schema(CaseEvaluationInput)}


#: Extra generated files for ``schemas.generate`` (checked in under ``schemas/json``).
EXTRA_JSON = {TOOL_FILE: render_case_evaluation_tool}

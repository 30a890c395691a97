"""Calibration contracts: Adjudication (a human verdict per cell) and CalibrationRecord.

``chart-review.adjudications.v1`` carries the reviewer's final word on a cell the judge saw;
``chart-review.calibration.v1`` carries, per (task, criterion, prompt version), how well the
judge's suggestions matched those verdicts. Field names are a contract; add, never rename.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from schemas.base import AwareTime, Frozen, RecordId, SafeId, check_record_id
from schemas.chart_review import CellKeyed, check_json_value
from schemas.reviewer_labels import AGENT_ERROR

SCHEMA_VERSION = 1

#: The reviewer's 4-way classification of a disagreement; ``n_a`` for cells that were not a
#: disagreement (type drift, low confidence). Same tokens as the judge's classification_hint,
#: plus ``agent_error``: the error of the agent ``error_agent`` names, for a third or later
#: agent, which the positional tokens cannot name (added for tasks with more than two agents).
Classification = Literal["agent_a_error", "agent_b_error", "guideline_gap", "true_ambiguity",
                         "n_a", "agent_error"]
CLASSIFICATIONS: tuple[str, ...] = (
    "agent_a_error", "agent_b_error", "guideline_gap", "true_ambiguity", "n_a")
#: The positional tokens, then the one that names its agent in ``error_agent`` (AGENT_ERROR,
#: defined with the labels in schemas.reviewer_labels).
#: Which agent(s) the reviewer found right; same tokens as the judge's agent_correctness
#: (``agent_a`` is the job's first agent: see ``JudgeResult.agents`` for the ids).
Correctness = Literal["agent_a", "agent_b", "neither", "both", "n_a"]
#: Whether the reviewer took the judge's suggestion as the final answer or gave another.
Decision = Literal["accepted", "overridden"]
#: A review page decision id (``dashboard.decisions.adjudication_id``): a short record id.
DecisionId = Annotated[str, Field(min_length=1, max_length=64), AfterValidator(check_record_id)]
#: How the reviewer saw the cell (issue 27): ``blind`` without the judge's answer.
ReviewMode = Literal["blind", "verify"]
#: A 95% interval ``[low, high]`` (docs/calibration.md says how each one is computed).
Interval = tuple[float, float]
#: Longest reviewer comment kept on an adjudication.
MAX_COMMENT_CHARS = 2000


class Adjudication(Frozen, CellKeyed):
    """A human reviewer's final answer and classification for one cell."""

    schema_version: int = SCHEMA_VERSION
    #: Optional redundant cell key; when present it must equal task|patient|field.
    cell: str | None = None
    task_id: SafeId
    patient_id: SafeId
    field_id: SafeId
    #: The reviewer's final answer (any JSON value of the criterion's answer schema).
    final_answer: Any = None
    classification: Classification
    #: Optional: which agent(s) the reviewer found right (agent A first, as in JudgeJob).
    agent_correctness: Correctness | None = None
    #: The agent the reviewer blamed, by id: set with ``agent_error`` (required) and, by the
    #: review page, with ``agent_a_error``/``agent_b_error`` too. Added for N agents.
    error_agent: SafeId | None = None
    #: The agents whose answer equals the final answer, by id, any number of them (the
    #: page fills it; ``agent_correctness`` names the first two only). Added for N agents.
    correct_agents: tuple[SafeId, ...] | None = None
    #: Pseudonymous reviewer id (never a name or an e-mail address).
    adjudicator: SafeId
    adjudicated_at: AwareTime
    #: Added for the review page (all optional; older adjudications carry none of them).
    #: A deterministic id of this decision (see dashboard.decisions.adjudication_id): a
    #: retried save carries the same id, so consumers can drop the duplicate.
    adjudication_id: DecisionId | None = None
    #: The judge result the reviewer verified (its ``result_id``).
    result_id: RecordId | None = None
    #: The judge's suggested answer as the reviewer saw it.
    suggested_answer: Any = None
    decision: Decision | None = None
    comment: str | None = Field(default=None, max_length=MAX_COMMENT_CHARS)
    #: The ``adjudication_id`` of the cell's earlier decision this one replaces, if any.
    supersedes: DecisionId | None = None
    #: Added for the blind audit (issue 27): ``blind`` when the reviewer decided without
    #: seeing the judge's suggestion, hint or confidence; absent means ``verify``.
    review_mode: ReviewMode | None = None
    #: Added for double review: which of a cell's two independent reviews this is (1: the
    #: first, the one calibration takes as ground truth; 2: the second reviewer's, who
    #: never saw the first). Absent means 1. A decision supersedes only its own slot's.
    review_slot: Literal[1, 2] | None = None

    _final = field_validator("final_answer", "suggested_answer")(check_json_value)

    @model_validator(mode="after")
    def _cell_matches(self) -> Adjudication:
        if self.cell is not None and self.cell != self.key:
            raise ValueError("cell must equal task_id|patient_id|field_id")
        if self.classification == AGENT_ERROR and self.error_agent is None:
            raise ValueError("classification agent_error needs error_agent (the agent's id)")
        if self.error_agent is not None and not self.classification.endswith("_error"):
            raise ValueError("error_agent goes only with an agent's error")
        return self


class Figure(Frozen):
    """``hits`` of ``n``; ``rate`` is null when ``n`` is 0."""

    hits: int = Field(ge=0)
    n: int = Field(ge=0)
    rate: float | None = None
    #: Wilson 95% interval of ``rate`` (null when ``n`` is 0). Added in issue 27.
    ci95: Interval | None = None


class Confusion(Frozen):
    """Counts of reviewer classification (rows) by judge classification_hint (columns)."""

    labels: tuple[str, ...]
    counts: tuple[tuple[int, ...], ...]


class PairAgreement(Frozen):
    """Two reviewer agents, by id, over the cells both answered: same canonical answer."""

    agents: tuple[str, str]
    agreement: Figure
    kappa: float | None = None
    kappa_ci95: Interval | None = None


class AgentAgreement(Frozen):
    """How often the two reviewer agents agreed on this criterion (from cell outcomes):
    ``agreement`` and ``type_drift`` cells agree, ``disagreement`` cells do not; cells with a
    missing agent or a single low-confidence answer are left out."""

    agreed: int = Field(ge=0)
    n: int = Field(ge=0)
    rate: float | None = None
    #: Added in issue 27 (any number of agents): the Wilson interval of ``rate``; Fleiss'
    #: kappa over the cells every one of the ``raters`` agents answered (``cells``), by
    #: their canonical answers; and each pair of agents by id.
    ci95: Interval | None = None
    raters: int | None = None
    cells: int | None = None
    fleiss_kappa: float | None = None
    pairwise: tuple[PairAgreement, ...] = ()


class ModeFigures(Frozen):
    """The judge against the reviewers on the cells adjudicated in one review mode."""

    cells_adjudicated: int = Field(ge=0)
    answer_accuracy: Figure
    classification_agreement: Figure
    classification_kappa: float | None = None
    kappa_ci95: Interval | None = None
    ac1: float | None = None


class Difference(Frozen):
    """``verify`` minus ``blind`` answer accuracy (the anchoring effect), with Newcombe's
    hybrid score 95% interval for two independent proportions; null without both."""

    estimate: float | None = None
    ci95: Interval | None = None


class ReviewModes(Frozen):
    blind: ModeFigures
    verify: ModeFigures
    verify_minus_blind: Difference


class HumanAgreement(Frozen):
    """Reviewer against reviewer on double-reviewed cells of the criterion (any prompt
    version): final answers (``percent``, ``kappa``, ``ac1``) and classifications."""

    n: int = Field(ge=0)
    percent: Figure
    kappa: float | None = None
    kappa_ci95: Interval | None = None
    ac1: float | None = None
    ac1_ci95: Interval | None = None
    classification_agreement: Figure | None = None
    classification_kappa: float | None = None
    classification_ac1: float | None = None


class CalibrationRecord(Frozen):
    """One prompt version's figures on one criterion against the human adjudications."""

    schema_version: int = SCHEMA_VERSION
    #: sha256 of the key and every figure: the same figures always carry the same id.
    calibration_id: RecordId
    task_id: SafeId
    field_id: SafeId
    prompt_version: str
    #: Cells judged under this version (latest result per cell).
    cells_judged: int = Field(ge=0)
    #: Judged cells that also have an adjudication.
    cells_adjudicated: int = Field(ge=0)
    #: suggested_answer == final_answer, over adjudicated cells with a non-fallback result.
    answer_accuracy: Figure
    #: Cohen's kappa of classification_hint vs the reviewer's classification (null when
    #: undefined: no cells, or both always gave one and the same class).
    classification_kappa: float | None
    classification_agreement: Figure
    #: agent_correctness vs the reviewer's, over adjudications that state it.
    agent_correctness_agreement: Figure
    confusion: Confusion
    #: Fallback results over judged cells.
    fallback: Figure
    cost_usd: float = Field(ge=0)
    cost_per_cell_usd: float | None = None
    agent_agreement: AgentAgreement | None = None
    computed_at: AwareTime
    #: The reviewer agents behind the positional labels of this criterion's results, by id
    #: (``agent_a`` = ``agents[0]``, ``agent_b`` = ``agents[1]``, then any further agents),
    #: in the order the judge jobs list them. Names, not figures: not part of the id.
    agents: tuple[str, ...] = ()
    #: Added in issue 27 (docs/calibration.md): the interval of ``classification_kappa``,
    #: Gwet's AC1 of the same pairs, answer-level kappa/AC1 (judge's suggested vs the
    #: reviewer's final answer), the figures per review mode and the human baseline.
    kappa_ci95: Interval | None = None
    ac1: float | None = None
    ac1_ci95: Interval | None = None
    answer_kappa: float | None = None
    answer_kappa_ci95: Interval | None = None
    answer_ac1: float | None = None
    by_review_mode: ReviewModes | None = None
    human_agreement: HumanAgreement | None = None

    @property
    def key(self) -> str:
        return calibration_key(self.task_id, self.field_id, self.prompt_version)


def calibration_key(task_id: str, field_id: str, prompt_version: str) -> str:
    """The key of ``chart-review.calibration.v1``: one series per criterion and version."""
    return f"{task_id}|{field_id}|{prompt_version}"



"""The streams layer's ``Settings`` (pydantic-settings): Kafka, topics, groups, detect.

The LLM seam adds its own section on top (``agents.settings.Settings``, the one object read
once in ``main()`` and passed down); code in this layer sees only these fields.

Environment names (prefix ``JUDGEFLOW_``, nested groups joined with ``__``) are part of the
interface: operators and deploy manifests set them. See docs/configuration.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from streams.kafka_settings import KafkaSettings
from streams.settings_rules import (
    FINITE,
    SettingsModel,
    group_problem,
    refused,
    topic_problem,
)

PACKAGE_ROOT = Path(__file__).resolve().parent
SAMPLE_DIR = PACKAGE_ROOT / "sampledata" / "data"
#: What an unset directory setting means (an empty one is refused: it would be the CWD).
UNSET_DIR = {"state_dir": "var/state", "skill_dir": "the sample skill",
             "charts_dir": "the sample charts"}
#: The names ``logging`` knows (``JUDGEFLOW_LOG_LEVEL``, ``--log-level``), case-insensitive.
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def comma_list(value: object) -> object:
    """A list setting written as one environment string (``a, b,c``) as a tuple of its
    non-empty items; any other value as it is (pydantic validates it)."""
    if isinstance(value, str):
        return tuple(item.strip() for item in value.split(",") if item.strip())
    return value


class TopicSettings(SettingsModel):
    agent_answers: str = "chart-review.agent-answers.v1"
    judge_jobs: str = "chart-review.judge-jobs.v1"
    cell_outcomes: str = "chart-review.cell-outcomes.v1"
    judge_results: str = "chart-review.judge-results.v1"
    adjudications: str = "chart-review.adjudications.v1"
    calibration: str = "chart-review.calibration.v1"
    debrief_requests: str = "medkit.debrief-requests.v1"
    case_evaluations: str = "medkit.case-evaluations.v1"
    #: Internal: settle-window ticks for the detector, co-partitioned with agent_answers.
    detect_ticks: str = "judgeflow.detect-ticks.v1"
    #: Internal: every Message Batch a ``replay --batch`` submitted, recorded before polling.
    replay_batches: str = "judgeflow.replay-batches.v1"
    #: Internal, compacted: every paid LLM answer until its result is published
    #: (streams.journal), so that no answer is paid twice.
    llm_journal: str = "judgeflow.llm-journal.v1"
    #: Append-only access audit trail (schemas.audit): who was shown which patient's text.
    #: Never compacted; its retention is the operator's (judgeflow creates it unbounded).
    audit: str = "judgeflow.audit.v1"

    @field_validator("*")
    @classmethod
    def _legal(cls, value: str) -> str:
        return refused(value, topic_problem(value))

    @staticmethod
    def dlq(topic: str) -> str:
        return f"{topic}.dlq"


class GroupSettings(SettingsModel):
    detect: str = "judgeflow-detect"
    judge: str = "judgeflow-judge"
    debrief: str = "judgeflow-debrief"
    # no ``calibrate``: that worker reads whole topics and joins no group
    # (JUDGEFLOW_GROUPS__CALIBRATE is accepted with a warning, cli/env_names.DEPRECATED)

    @field_validator("*")
    @classmethod
    def _legal(cls, value: str, info: ValidationInfo) -> str:
        # detect's group names its state folder (state_dir / group) and Faust's topics
        return refused(value, group_problem(value, names_topics=info.field_name == "detect"))


class ReviewSettings(SettingsModel):
    """The review page's audit and the calibration decisions (issue 27; docs/calibration.md)."""

    #: Share of cells reviewed blind (chosen from the cell key: the same on every restart).
    blind_share: float = Field(default=0.10, ge=0, le=1)
    #: Share of cells reviewed by two different reviewers (blind cells first).
    double_share: float = Field(default=0.05, ge=0, le=1)
    #: How long a reviewer holds a cell they opened before another may take it.
    claim_seconds: float = Field(default=900.0, gt=0)
    #: Below this many adjudicated cells a series says "not enough cells".
    min_cells: int = Field(default=30, ge=1)
    #: Non-inferiority margin on answer accuracy for moving a criterion to a cheaper model.
    margin: float = Field(default=0.05, ge=0, le=1)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="JUDGEFLOW_",
        env_nested_delimiter="__",
        extra="ignore",
        frozen=True,
        **FINITE,
    )

    kafka: KafkaSettings = Field(default_factory=KafkaSettings)
    topics: TopicSettings = Field(default_factory=TopicSettings)
    groups: GroupSettings = Field(default_factory=GroupSettings)
    review: ReviewSettings = Field(default_factory=ReviewSettings)

    skill_dir: Path = SAMPLE_DIR / "skill"
    charts_dir: Path = SAMPLE_DIR / "charts"
    #: How long a cell waits for missing agents before it is decided with what it has.
    settle_seconds: float = Field(default=30.0, gt=0)
    #: How long a decided cell is kept so that a superseding re-run can be re-decided.
    retention_seconds: float = Field(default=3600.0, ge=0)
    expected_agents: Annotated[tuple[str, ...], NoDecode] = ("default", "skeptical")
    #: Per-task override of the expected agents (JSON: ``{"task-a": ["x", "y", "z"]}``).
    expected_agents_by_task: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    #: The chart-review tasks judged (comma-separated task ids): the judge dead-letters a
    #: job of any other task as ``unknown_task`` before paying for it. Empty (the
    #: default): every task.
    tasks: Annotated[tuple[str, ...], NoDecode] = ()
    #: A numeric confidence below this counts as low confidence.
    low_confidence_threshold: float = Field(default=0.5, ge=0, le=1)
    metrics_port: int = Field(default=0, ge=0, le=65535)
    #: Address the Prometheus endpoint binds. Loopback by default; containers set 0.0.0.0
    #: (the image does) so that Prometheus can scrape them.
    metrics_host: str = "127.0.0.1"
    #: Faust web/data directory for worker state (table caches). Never the CWD by default.
    state_dir: Path = Path("var/state")
    log_level: str = "INFO"
    #: ``text`` (one line per record) or ``json`` (one JSON object per line: streams.logjson)
    log_format: Literal["text", "json"] = "text"

    @field_validator("log_level", mode="before")
    @classmethod
    def _known_level(cls, value: object) -> object:
        if isinstance(value, str) and value.upper() in LOG_LEVELS:
            return value.upper()
        raise ValueError(f"must be one of {', '.join(LOG_LEVELS)}")

    @field_validator("state_dir", "skill_dir", "charts_dir", mode="before")
    @classmethod
    def _not_cwd(cls, value: object, info: ValidationInfo) -> object:
        if isinstance(value, str) and not value.strip():  # Path("") is the working directory
            raise ValueError("is empty (that would be the working directory): unset it for "
                             f"{UNSET_DIR[info.field_name or '']}, or name a directory")
        return value

    @field_validator("tasks", mode="before")
    @classmethod
    def _split_tasks(cls, value: object) -> object:
        return comma_list(value)

    @field_validator("expected_agents", mode="before")
    @classmethod
    def _split_agents(cls, value: object) -> object:
        agents = comma_list(value)
        if isinstance(value, str) and not agents:
            raise ValueError("must name at least one agent")
        return agents

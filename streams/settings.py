"""The one ``Settings`` object (pydantic-settings). Read once in ``main()`` and passed down.

Environment names (prefix ``JUDGEFLOW_``, nested groups joined with ``__``) are part of the
interface: operators and deploy manifests set them. See docs/configuration.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

PACKAGE_ROOT = Path(__file__).resolve().parent
SAMPLE_DIR = PACKAGE_ROOT / "sampledata" / "data"


class KafkaSettings(BaseModel):
    bootstrap_servers: str = "127.0.0.1:9092"
    #: Client-side pause after an empty fetch, in ms. 0 = off (real Kafka honours max-wait).
    #: The embedded broker ignores Fetch max-wait; ``judgeflow demo``/tests set this for it.
    idle_fetch_backoff_ms: int = Field(default=0, ge=0, le=5000)
    #: Partitions for topics judgeflow creates itself (inputs, outputs, DLQs, internal).
    partitions: int = Field(default=4, ge=1)
    replication_factor: int = Field(default=1, ge=1)
    #: Consumer-group liveness: a worker killed without leaving is replaced after this long.
    session_timeout_seconds: float = Field(default=10.0, gt=0)
    heartbeat_interval_seconds: float = Field(default=2.0, gt=0)
    commit_interval_seconds: float = Field(default=1.0, gt=0)
    #: Embedded/dev broker only: before joining a group, evict members whose process on this
    #: host is dead (noida-db never expires them). Never enable against a shared cluster.
    evict_dead_members: bool = False
    #: Producer batching delay: larger batches, fewer requests, a little more latency.
    producer_linger_ms: int = Field(default=20, ge=0, le=1000)


class TopicSettings(BaseModel):
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

    @staticmethod
    def dlq(topic: str) -> str:
        return f"{topic}.dlq"


class GroupSettings(BaseModel):
    detect: str = "judgeflow-detect"
    judge: str = "judgeflow-judge"
    debrief: str = "judgeflow-debrief"
    calibrate: str = "judgeflow-calibrate"


class LLMSettings(BaseModel):
    provider: Literal["anthropic", "offline"] = "offline"
    #: Must be in the model catalogue (agents/providers/models.json or ``models_file``).
    model: str = "claude-sonnet-5-5"
    #: Output budget per call. Adaptive-thinking models spend part of it thinking, so it is
    #: sized for thinking plus the answer; the API bills only what is generated.
    max_tokens: int = Field(default=16_000, ge=64)
    #: Budget of the one retry after a reply stopped at ``max_tokens`` (debrief repair).
    repair_max_tokens: int = Field(default=32_000, ge=64)
    #: ``output_config.effort`` for models that accept it; unset = the model's default.
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = None
    #: A JSON model catalogue whose entries add to / replace the packaged ones.
    models_file: Path | None = None
    #: Prompt-cache lifetime asked for (``cache_control.ttl``); priced accordingly.
    cache_ttl: Literal["5m", "1h"] = "5m"
    #: Count each distinct cacheable prefix once (count_tokens) and log whether it caches.
    check_cache_prefixes: bool = True
    #: Our own deadline for one LLM request including the SDK's retries, in seconds.
    deadline_seconds: float = Field(default=60.0, gt=0)
    #: SDK-level retries. 0: the SDK honours retry-after without a cap and its retries are
    #: invisible to our limiter; every retry runs in agents.providers.limits instead.
    sdk_max_retries: int = Field(default=0, ge=0, le=5)
    #: Our retries of retryable failures within the deadline.
    max_attempts: int = Field(default=4, ge=1)
    concurrency: int = Field(default=8, ge=1)
    requests_per_minute: int = Field(default=50, ge=1)
    #: Max characters of patient notes placed in one judge prompt.
    context_budget_chars: int = Field(default=24_000, ge=1000)
    #: Ask for structured output (JSON schema); off = plain text with sentinels (gateways
    #: or models without structured outputs). Answers are re-validated either way.
    structured_output: bool = True
    #: Our retry backoff when the server gives no retry-after: base * 2^(attempt-1), capped.
    backoff_base_seconds: float = Field(default=1.0, ge=0)
    backoff_max_seconds: float = Field(default=30.0, ge=0)
    #: Circuit breaker (streams.breaker): after an outage opens it, the first probe waits
    #: this long; every failed probe doubles the wait, up to the maximum.
    breaker_backoff_seconds: float = Field(default=2.0, gt=0)
    breaker_backoff_max_seconds: float = Field(default=60.0, gt=0)


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="JUDGEFLOW_",
        env_nested_delimiter="__",
        extra="ignore",
        frozen=True,
    )

    kafka: KafkaSettings = Field(default_factory=KafkaSettings)
    topics: TopicSettings = Field(default_factory=TopicSettings)
    groups: GroupSettings = Field(default_factory=GroupSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)

    skill_dir: Path = SAMPLE_DIR / "skill"
    charts_dir: Path = SAMPLE_DIR / "charts"
    #: How long a cell waits for missing agents before it is decided with what it has.
    settle_seconds: float = Field(default=30.0, gt=0)
    #: How long a decided cell is kept so that a superseding re-run can be re-decided.
    retention_seconds: float = Field(default=3600.0, ge=0)
    expected_agents: Annotated[tuple[str, ...], NoDecode] = ("default", "skeptical")
    #: Per-task override of the expected agents (JSON: ``{"task-a": ["x", "y", "z"]}``).
    expected_agents_by_task: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    #: A numeric confidence below this counts as low confidence.
    low_confidence_threshold: float = Field(default=0.5, ge=0, le=1)
    metrics_port: int = Field(default=0, ge=0, le=65535)
    #: Address the Prometheus endpoint binds. Loopback by default; containers set 0.0.0.0
    #: (the image does) so that Prometheus can scrape them.
    metrics_host: str = "127.0.0.1"
    #: Faust web/data directory for worker state (table caches). Never the CWD by default.
    state_dir: Path = Path("var/state")
    log_level: str = "INFO"

    @field_validator("expected_agents", mode="before")
    @classmethod
    def _split_agents(cls, value: object) -> object:
        if isinstance(value, str):
            agents = tuple(a.strip() for a in value.split(",") if a.strip())
            if not agents:
                raise ValueError("JUDGEFLOW_EXPECTED_AGENTS must name at least one agent")
            return agents
        return value

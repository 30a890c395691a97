"""The LLM seam's settings (``JUDGEFLOW_LLM__*``): provider, model, budgets, retries.

They live next to the providers that read them; ``agents.settings.Settings`` adds them to
the streams layer's settings as the ``llm`` section.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, TypedDict

from pydantic import Field, SecretStr

from streams.settings_rules import SettingsModel


class CriterionModel(SettingsModel):
    """A per-criterion override of the judge's model and/or effort."""

    model_config = {"extra": "forbid", "frozen": True}

    model: str | None = None
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = None


class LLMSettings(SettingsModel):
    #: ``anthropic`` (the Claude API), ``bedrock`` (Amazon Bedrock through the SDK's
    #: AnthropicBedrockMantle client for the 5.x models, AnthropicBedrock for the
    #: ARN-versioned ones: platforms.json says which), ``vertex`` (Google Vertex AI,
    #: AnthropicVertex), ``local`` (an Anthropic-compatible server inside the hospital:
    #: vLLM, Ollama, llama.cpp, at ``base_url``), ``offline``.
    provider: Literal["anthropic", "bedrock", "vertex", "local", "offline"] = "offline"
    #: ``local``: the server's address (``http://127.0.0.1:8000``, without ``/v1``).
    base_url: str | None = None
    #: ``local``: which server kind answers (agents/providers/servers.json: what it accepts).
    server: Literal["vllm", "ollama", "llamacpp", "generic"] = "generic"
    #: ``local``: the server's own key (vLLM/llama.cpp ``--api-key``), sent as a bearer
    #: token; unset: no credential at all (never the Claude API's key).
    local_api_key: SecretStr | None = None
    #: Cloud region: Bedrock (default: the AWS chain, ``AWS_REGION``/profile) or Vertex
    #: (default: ``CLOUD_ML_REGION``; ``global``, ``us``, ``eu`` or a region).
    region: str | None = None
    #: Vertex project id (default: ``ANTHROPIC_VERTEX_PROJECT_ID``, else the ADC project).
    project: str | None = None
    #: Per-criterion judge model/effort (JSON: ``{"egfr_category": {"model": "..."}}``);
    #: every model must be in the catalogue (checked at start). See docs/configuration.md.
    criterion_models: dict[str, CriterionModel] = Field(default_factory=dict)
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
    #: A JSON file of Bedrock/Vertex model ids, lifecycles and endpoints that add to /
    #: replace the packaged ``agents/providers/platforms.json`` (a platform's new model
    #: without a release).
    platforms_file: Path | None = None
    #: Prompt-cache lifetime asked for (``cache_control.ttl``); priced accordingly.
    cache_ttl: Literal["5m", "1h"] = "5m"
    #: Count each distinct cacheable prefix once (count_tokens) and log whether it caches.
    check_cache_prefixes: bool = True
    #: Send ``diagnostics.previous_message_id`` on cached requests and log the API's
    #: ``cache_miss_reason`` (the prefix changed, or the previous message was not found).
    cache_diagnostics: bool = True
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


class WorkerOptions(TypedDict):
    call_deadline_seconds: float
    breaker_backoff_seconds: float
    breaker_backoff_max_seconds: float


def worker_options(llm: LLMSettings) -> WorkerOptions:
    """What a worker that calls the model passes the streams runner (which never sees the
    LLM settings): its call deadline and its circuit breaker's backoff."""
    return {"call_deadline_seconds": llm.deadline_seconds,
            "breaker_backoff_seconds": llm.breaker_backoff_seconds,
            "breaker_backoff_max_seconds": llm.breaker_backoff_max_seconds}

"""Claude on Amazon Bedrock and Google Vertex AI through the SDK's own clients.

The platform data (:mod:`agents.providers.platforms`) names, per model, the endpoint that
serves it and so the client: ``llm.provider`` ``bedrock`` -> ``anthropic.AsyncAnthropicBedrock``
for the ARN-versioned models on InvokeModel (``POST /model/{id}/invoke``, body field
``anthropic_version: bedrock-2023-05-31``) or ``anthropic.AsyncAnthropicBedrockMantle`` for
the models of "Claude in Amazon Bedrock" — the 5.x models — on the bedrock-mantle Messages
API (``POST /anthropic/v1/messages``, the Claude API's request shape, ``model`` in the body,
SigV4 for service ``bedrock-mantle``); both sign from the standard AWS credential chain or
send Bedrock's API key ``AWS_BEARER_TOKEN_BEDROCK`` (read by the SDK). ``vertex`` ->
``anthropic.AsyncAnthropicVertex`` (``.../publishers/anthropic/models/{m}:rawPredict`` with an
OAuth token from Google's Application Default Credentials). Base URLs come from
``ANTHROPIC_BEDROCK_BASE_URL`` / ``ANTHROPIC_BEDROCK_MANTLE_BASE_URL`` /
``ANTHROPIC_VERTEX_BASE_URL`` (read by the SDK).

Everything else is the Anthropic provider's (retries, pacing, halting, error kinds): the
request differs only in the platform's model id and the ``anthropic_version`` body field an
endpoint may require. What an endpoint lacks is said once and replaced: no token counting
(InvokeModel) -> cache prefixes are estimated locally; no Message Batches (every endpoint
here) -> ``supports_batches`` is false and ``replay --batch`` runs live calls; no Models
API -> the lifecycle comes from the platform data. The client is pluggable (``client=``)
like the Anthropic provider's.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from datetime import UTC, date, datetime
from typing import Any

import anthropic

from agents.errors import AgentsError, LLMError
from agents.providers import cloud_credentials, platforms
from agents.providers.anthropic import AnthropicProvider
from agents.providers.anthropic_errors import classify
from agents.providers.base import LLMRequest, NoBatchesAPI
from agents.providers.limits import Budget
from agents.providers.settings import LLMSettings

log = logging.getLogger(__name__)


def make_client(client: platforms.Client, llm: LLMSettings, base_url: str | None = None
                ) -> Any:
    """The SDK's client of that kind; a missing region/project is one line."""
    common: dict[str, Any] = {"max_retries": llm.sdk_max_retries,
                              "timeout": llm.deadline_seconds}
    if base_url:
        common["base_url"] = base_url
    try:
        if client == "bedrock":
            return anthropic.AsyncAnthropicBedrock(aws_region=llm.region, **common)
        if client == "bedrock-mantle":
            return anthropic.AsyncAnthropicBedrockMantle(aws_region=llm.region, **common)
        project = llm.project or os.environ.get("ANTHROPIC_VERTEX_PROJECT_ID")
        if not project:
            raise AgentsError("llm.provider vertex needs a project: set JUDGEFLOW_LLM__PROJECT "
                              "or ANTHROPIC_VERTEX_PROJECT_ID")
        if llm.region:
            common["region"] = llm.region
        return anthropic.AsyncAnthropicVertex(project_id=project, **common)
    except (ValueError, anthropic.AnthropicError) as exc:
        vertex = client == "vertex"
        name = "vertex" if vertex else "bedrock"
        if "region" in str(exc).lower():  # our settings, not the SDK's constructor argument
            where = "CLOUD_ML_REGION" if vertex else "AWS_REGION (or the AWS profile's region)"
            raise AgentsError(f"llm.provider {name} needs a region: set "
                              f"JUDGEFLOW_LLM__REGION or {where}") from None
        raise AgentsError(f"llm.provider {name}: {str(exc).splitlines()[0]}") from None


class CloudProvider(NoBatchesAPI, AnthropicProvider):
    """The Anthropic provider with a platform's client, model id and body version."""

    def __init__(self, settings: LLMSettings, key: str, *, client: Any = None,
                 budget: Budget | None = None, base_url: str | None = None) -> None:
        self.platform = platforms.get(key, settings.platforms_file)
        self.platform_model = self.platform.model(key, settings.model)
        #: The endpoint serving the model (Bedrock: InvokeModel or bedrock-mantle).
        self.endpoint = self.platform.endpoint_of(self.platform_model)
        super().__init__(settings, budget=budget, client=client or make_client(
            self.endpoint.client, settings, base_url))
        self.name = key
        self.supports_batches = self.endpoint.batches
        self.sends_diagnostics = self.endpoint.diagnostics
        self.credentials_hint = cloud_credentials.HINTS[key]
        self._said: set[str] = set()

    def params(self, request: LLMRequest) -> dict[str, Any]:
        params = super().params(request)
        params["model"] = self.platform_model.id  # InvokeModel/rawPredict: the SDK puts it
        if self.endpoint.anthropic_version:       # in the URL; Mantle: in the body
            params["extra_body"] = {"anthropic_version": self.endpoint.anthropic_version}
        return params

    async def complete(self, request: Any) -> Any:
        try:
            response = await super().complete(request)
        except LLMError:
            raise
        except Exception as exc:  # credential chains raise their own types
            if not cloud_credentials.is_credential_error(exc):
                raise
            log.debug("%s credentials: %r", self.name, exc)
            raise LLMError("auth", f"{self.name}: no usable credentials "
                           f"({type(exc).__name__})", retryable=False) from None
        # Mantle answers with its own id (anthropic.claude-...): results name the catalogue's
        known = self.platform.catalogue_id(response.model)
        return response if known is None else dataclasses.replace(response, model=known)

    def _once(self, what: str, message: str) -> None:
        if what not in self._said:
            self._said.add(what)
            log.info("%s: %s", self.name, message)

    async def count_prefix_tokens(self, request_prefix: LLMRequest) -> int:
        p = self.params(request_prefix)
        messages = p["messages"] or [{"role": "user", "content": "."}]
        if not self.endpoint.count_tokens:
            self._once("count", "the endpoint has no token counting; cache prefix sizes "
                       "are local estimates (characters / 3.5)")
            return self.estimate_prefix_tokens(p, messages)
        extra = {k: p[k] for k in ("system", "tools", "extra_body") if k in p}
        try:
            counted = await self.client.messages.count_tokens(
                model=self.platform_model.id, messages=messages, **extra,
                timeout=self.settings.deadline_seconds)
        except anthropic.AnthropicError as exc:
            raise classify(exc) from exc
        return int(counted.input_tokens)

    async def retrieve_model(self) -> dict[str, Any]:
        """No Models API on the platform: its lifecycle from the platform data."""
        m = self.platform_model
        return {"id": m.id, "type": "model",
                "lifecycle": m.status(datetime.now(UTC).date()),
                "deprecated_at": m.deprecated.isoformat() if m.deprecated else None,
                "retires_at": m.retires.isoformat() if m.retires else None}

    def check_lifecycle(self, today: date, origin: Any = None) -> None:
        """The platform's schedule decides (not the Claude API's dates): retired there ->
        one-line :class:`AgentsError` naming the setting the model came from (``origin``,
        a :class:`~agents.providers.startup.Origin`); deprecated -> a WARNING with the date."""
        m = self.platform_model
        status = m.status(today)
        if status == "retired":
            setting = getattr(origin, "model", "JUDGEFLOW_LLM__MODEL")
            raise AgentsError(f"model {self.model!r} ({m.id}) is retired on {self.name}"
                              f"{' since ' + str(m.retires) if m.retires else ''}; set "
                              f"{setting} to a current model")
        if status == "deprecated":
            log.warning("model %s (%s) is deprecated on %s; it retires there on %s: move to "
                        "a current model before then", self.model, m.id, self.name,
                        m.retires or "a date not yet announced")

    @property
    def batch_host(self) -> str:  # type: ignore[override]
        return self.endpoint.name

    @property
    def has_credentials(self) -> bool:
        return cloud_credentials.found(self.name, self.client)

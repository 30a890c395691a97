"""The Anthropic provider: :class:`LLMRequest` -> Messages API -> :class:`LLMResponse`.

The only module (with ``anthropic_*.py``) that imports ``anthropic``. Request building and
response parsing are pure (:mod:`agents.providers.anthropic_params`).

* The SDK runs with ``sdk_max_retries`` (default 0): every retry is ours
  (:mod:`agents.providers.limits`), paced to the tier and bounded by our deadline.
* The ``anthropic-ratelimit-*`` headers and the usage of every answer, errors included, go
  to the worker's pacer (:mod:`agents.providers.pacing`), which slows down before a 429.
* Failures raise :class:`agents.errors.LLMError` with a stable ``kind``: ``rate_limited``,
  ``overloaded``, ``server_error`` (504 included), ``timeout``, ``connection`` (retryable);
  ``bad_request``, ``auth``, ``request_too_large`` (413),
  ``not_found`` (permanent); ``spend_limit`` (a 429 saying the spend/usage limit is reached)
  and ``billing`` (402) are not retried within a call and mark the provider halted (logged
  once at ERROR, gauge ``judgeflow_llm_halted`` = 1 for the alert rules). The worker's
  circuit breaker then pauses it (:mod:`streams.breaker`) and its probes keep asking; the
  first answer after the operator raised the limit clears the halt (gauge 0, logged).
* ``stop_reason`` ``max_tokens``, ``refusal`` and ``model_context_window_exceeded`` are
  *returned*, not raised, so the caller accounts for the tokens it paid.

``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` are read by the SDK from the environment.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Sequence
from typing import Any

import anthropic

from agents.errors import LLMError
from agents.providers import anthropic_batch, catalogue
from agents.providers.anthropic_errors import HALTING, classify
from agents.providers.anthropic_params import build_params, to_response
from agents.providers.base import LLMRequest, LLMResponse
from agents.providers.cache_diagnostics import CacheLog
from agents.providers.limits import Budget, RetryPolicy, call_with_retries
from agents.providers.model_facts import ModelFacts
from agents.providers.model_facts import parse as parse_facts
from agents.providers.pacing import Cost
from agents.providers.settings import LLMSettings

log = logging.getLogger(__name__)
#: Seconds between Models API look-ups after one failed.
FACTS_RETRY = 300
__all__ = ["AnthropicProvider", "build_params", "classify", "to_response"]


class AnthropicProvider:
    """One per worker process: owns the SDK client and the worker's call budget."""

    name = "anthropic"
    #: The endpoint documents ``diagnostics`` (the Claude API does; platforms and local
    #: servers say per endpoint, as data).
    sends_diagnostics = True

    def __init__(self, settings: LLMSettings, *, client: Any = None,
                 budget: Budget | None = None, base_url: str | None = None,
                 api_key: str | None = None) -> None:
        self.settings = settings
        self.model = settings.model
        self.entry = catalogue.load(settings.models_file).find(settings.model)
        self.client = client or anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, max_retries=settings.sdk_max_retries,
            timeout=settings.deadline_seconds)
        policy = RetryPolicy(settings.deadline_seconds, settings.max_attempts,
                             settings.backoff_base_seconds, settings.backoff_max_seconds)
        self.budget = budget or Budget.create(
            policy, requests_per_minute=settings.requests_per_minute,
            concurrency=settings.concurrency)
        #: Set by a spend-limit or billing error, cleared by the next answer.
        self.halted: LLMError | None = None
        self.on_halt: list[Any] = []  # callbacks (gauges), called once with the error
        self.on_resume: list[Any] = []  # callbacks, called with the error the answer cleared
        self._prefixes_seen: set[str] = set()
        self._background: set[asyncio.Task[Any]] = set()
        #: What the Models API says about the model (None until it answered).
        self.facts: ModelFacts | None = None
        self._facts_tried = -math.inf
        self.cache_log = CacheLog(self.entry.min_cache_tokens if self.entry else 0)

    def params(self, request: LLMRequest) -> dict[str, Any]:
        s = self.settings
        return build_params(request, self.model, self.entry, max_tokens_floor=s.max_tokens,
                            effort=s.effort, cache_ttl=s.cache_ttl, facts=self.facts)

    async def load_facts(self) -> ModelFacts:
        """Ask the Models API about the model (raises :class:`LLMError`); kept for every
        later request."""
        self._facts_tried = time.monotonic()
        self.facts = parse_facts(await self.retrieve_model())
        return self.facts

    async def _ensure_facts(self) -> None:
        """Facts before the first request; a failed look-up is retried at most every
        ``FACTS_RETRY`` seconds (requests meanwhile use conservative defaults)."""
        if self.facts is not None or time.monotonic() - self._facts_tried < FACTS_RETRY:
            return
        try:
            await self.load_facts()
        except LLMError as exc:
            log.warning("Models API look-up of %s failed (%s); retrying in %ds", self.model,
                        exc.kind, FACTS_RETRY)

    async def model_facts(self) -> ModelFacts | None:
        """The Models API's facts (asked once if not yet known; None when it failed)."""
        await self._ensure_facts()
        return self.facts

    async def complete(self, request: LLMRequest) -> LLMResponse:
        await self._ensure_facts()
        params = self.params(request)
        key = self.cache_log.key(request) \
            if self.settings.cache_diagnostics and self.sends_diagnostics else None
        if key is not None:
            params["diagnostics"] = {"previous_message_id": self.cache_log.previous(key)}
        self._check_prefixes(request)
        started = time.monotonic()

        async def once(remaining: float) -> Any:
            try:
                raw = await self.client.messages.with_raw_response.create(
                    **params, timeout=max(0.1, remaining))
            except anthropic.AnthropicError as exc:
                self.budget.observe(getattr(getattr(exc, "response", None), "headers", None))
                error = classify(exc)
                if error.kind in HALTING:
                    self._halt(error)
                raise error from exc
            except TypeError as exc:  # the SDK's "could not resolve authentication method"
                kind = "auth" if "authentication" in str(exc) else "client_error"
                raise LLMError(kind, f"the SDK refused the request: {kind}",
                               retryable=False) from exc
            message = await raw.parse()
            u = message.usage
            self.budget.observe(raw.headers, output_tokens=u.output_tokens, input_tokens=(
                u.input_tokens + (u.cache_creation_input_tokens or 0)))
            return message

        message, attempts = await call_with_retries(self.budget, once, _estimate(params))
        self._resume()
        latency_ms = int((time.monotonic() - started) * 1000)
        response = to_response(message, latency_ms, attempts)
        if key is not None:
            self.cache_log.observe(key, message, self.model)
        log.debug("anthropic: %s stop=%s in=%d out=%d cache_read=%d attempts=%d %dms",
                  response.model, response.stop_reason, response.usage.input_tokens,
                  response.usage.output_tokens, response.usage.cache_read_input_tokens,
                  attempts, latency_ms)
        return response

    def _halt(self, error: LLMError) -> None:
        if self.halted is not None:
            return
        self.halted = error
        log.error("LLM calls paused: %s (%s). Raise the limit or fix billing in the Claude "
                  "Console; the worker resumes by itself once a probe is answered.",
                  error.kind, error.message)
        for callback in self.on_halt:
            callback(error)

    def _resume(self) -> None:
        error, self.halted = self.halted, None
        if error is not None:
            log.warning("LLM calls answered again after %s; resumed", error.kind)
            for callback in self.on_resume:
                callback(error)

    def _check_prefixes(self, request: LLMRequest) -> None:
        """Once per distinct cacheable prefix: count it and log whether it caches."""
        if not self.settings.check_cache_prefixes or not any(b.cache for b in request.system):
            return
        from agents.providers.startup import report_cache_prefixes

        key = self.cache_log.key(request) or ""
        if key in self._prefixes_seen:
            return
        self._prefixes_seen.add(key)
        task = asyncio.get_running_loop().create_task(report_cache_prefixes(self, request))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def count_prefix_tokens(self, request_prefix: LLMRequest) -> int:
        """Input tokens of ``request_prefix`` (tools + system + messages) by count_tokens.
        A prefix without messages is counted with a one-character user turn."""
        p = self.params(request_prefix)
        messages = p["messages"] or [{"role": "user", "content": "."}]
        extra = {k: p[k] for k in ("system", "tools") if k in p}
        try:
            counted = await self.client.messages.count_tokens(
                model=self.model, messages=messages, **extra,
                timeout=self.settings.deadline_seconds)
        except anthropic.AnthropicError as exc:
            raise classify(exc) from exc
        return int(counted.input_tokens)

    @staticmethod
    def estimate_prefix_tokens(params: dict[str, Any], messages: object) -> int:
        """Input tokens where the endpoint cannot count them (Bedrock InvokeModel, some
        local servers): characters of system, tools and ``messages`` / 3.5. The caller
        passes the messages as its endpoint would see them."""
        chars = sum(len(str(params.get(k) or "")) for k in ("system", "tools"))
        return math.ceil((chars + len(str(messages))) / 3.5)

    async def retrieve_model(self) -> dict[str, Any]:
        """The Models API's view of our model (``id``, ``lifecycle``, dates...)."""
        try:
            info = await self.client.models.retrieve(self.model,
                                                     timeout=self.settings.deadline_seconds)
        except anthropic.AnthropicError as exc:
            raise classify(exc) from exc
        out: dict[str, Any] = info.to_dict(mode="json")
        return out

    # -- Message Batches (agents.providers.anthropic_batch) -------------------------
    async def submit_batch(self, items: Sequence[tuple[str, LLMRequest]]
                           ) -> list[tuple[str, list[str]]]:
        """As many batches as the API's limits need: ``[(batch id, custom ids)]``."""
        return await anthropic_batch.submit(self, items)

    async def batch_status(self, batch_id: str) -> anthropic_batch.BatchStatus:
        return await anthropic_batch.status(self, batch_id)

    async def batch_results(self, batch_id: str) -> list[anthropic_batch.BatchResult]:
        return await anthropic_batch.results(self, batch_id)

    @property
    def has_credentials(self) -> bool:
        return bool(getattr(self.client, "api_key", None)
                    or getattr(self.client, "auth_token", None))

    async def aclose(self) -> None:
        for task in list(self._background):
            task.cancel()
        await self.client.close()


def _estimate(params: dict[str, Any]) -> Cost:
    """A request's cost before the pacer has learned real ones: all input uncached
    (characters / 3.5) and a modest output (the real one is learned from the first answer)."""
    chars = len(json.dumps([params.get("system"), params.get("messages"), params.get("tools")],
                           default=str))
    return Cost(1, math.ceil(chars / 3.5), min(int(params.get("max_tokens") or 1024), 1024))

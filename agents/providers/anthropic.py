"""The Anthropic provider: :class:`LLMRequest` -> Messages API -> :class:`LLMResponse`.

The only module (with ``anthropic_*.py``) that imports ``anthropic``.

* System blocks marked ``cache=True`` get ``cache_control: ephemeral`` (prompt caching of the
  static prefix; tools and system come before the messages, so keep per-cell text in the
  messages).
* ``output_schema`` becomes structured output (``output_config.format`` json_schema); tools
  are passed with ``tool_choice`` auto/none (newer models reject forced tool choice).
  Callers re-validate every answer anyway.
* Failures raise :class:`agents.errors.LLMError` with a stable ``kind``: ``rate_limited``,
  ``overloaded``, ``server_error``, ``timeout``, ``connection`` (retryable) or
  ``bad_request``, ``auth`` (permanent). Retries run in :mod:`agents.providers.limits`,
  bounded by our deadline; the SDK itself retries at most ``sdk_max_retries`` times.
* ``stop_reason`` ``max_tokens`` and ``refusal`` are *returned*, not raised, so the caller
  can account for the tokens it paid and record what happened.

``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` are read by the SDK from the environment.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import anthropic

from agents.errors import LLMError
from agents.providers.base import LLMRequest, LLMResponse, TokenUsage, ToolCall
from agents.providers.limits import Budget, RetryPolicy, call_with_retries
from streams.settings import LLMSettings

log = logging.getLogger(__name__)


def build_params(request: LLMRequest, model: str) -> dict[str, Any]:
    """The keyword arguments of ``messages.create`` for ``request`` (pure; tested)."""
    system = []
    for block in request.system:
        item: dict[str, Any] = {"type": "text", "text": block.text}
        if block.cache:
            item["cache_control"] = {"type": "ephemeral"}
        system.append(item)
    params: dict[str, Any] = {"model": model, "max_tokens": request.max_tokens,
                              "messages": list(request.messages)}
    if system:
        params["system"] = system
    if request.tools:
        params["tools"] = list(request.tools)
        params["tool_choice"] = {"type": request.tool_choice}
    if request.output_schema is not None:
        params["output_config"] = {"format": {"type": "json_schema",
                                              "schema": request.output_schema}}
    return params


def _retry_after(headers: Any) -> float | None:
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name) if headers is not None else None
        if value:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue
    return None


def classify(exc: Exception) -> LLMError:
    """Map an SDK exception to an :class:`LLMError` (retryable vs permanent)."""
    if isinstance(exc, anthropic.APITimeoutError):
        return LLMError("timeout", "request timed out", retryable=True)
    if isinstance(exc, anthropic.APIConnectionError):
        return LLMError("connection", "connection failed", retryable=True)
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        after = _retry_after(exc.response.headers)
        message = f"HTTP {status}: {exc.type or 'error'}"
        if status == 429:
            return LLMError("rate_limited", message, retryable=True, retry_after=after,
                            status=status)
        if status == 529 or exc.type == "overloaded_error":
            return LLMError("overloaded", message, retryable=True, retry_after=after,
                            status=status)
        if status in (401, 403):
            return LLMError("auth", message, retryable=False, status=status)
        if status == 408:
            return LLMError("timeout", message, retryable=True, status=status)
        if status >= 500:
            return LLMError("server_error", message, retryable=True, retry_after=after,
                            status=status)
        return LLMError("bad_request", message, retryable=False, status=status)
    if isinstance(exc, anthropic.AnthropicError):
        return LLMError("client_error", f"{type(exc).__name__}", retryable=False)
    raise exc


def to_response(message: Any, latency_ms: int, attempts: int) -> LLMResponse:
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in message.content or ():
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            calls.append(ToolCall(block.id, block.name, block.input))
    u = message.usage
    usage = TokenUsage(u.input_tokens or 0, u.output_tokens or 0,
                       u.cache_read_input_tokens or 0, u.cache_creation_input_tokens or 0)
    return LLMResponse("".join(texts), tuple(calls), message.stop_reason or "unknown", usage,
                       message.model, latency_ms, attempts)


class AnthropicProvider:
    """One per worker process: owns the SDK client and the worker's call budget."""

    name = "anthropic"

    def __init__(self, settings: LLMSettings, *, client: Any = None,
                 budget: Budget | None = None, base_url: str | None = None,
                 api_key: str | None = None) -> None:
        self.settings = settings
        self.model = settings.model
        self.client = client or anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, max_retries=settings.sdk_max_retries,
            timeout=settings.deadline_seconds)
        policy = RetryPolicy(settings.deadline_seconds, settings.max_attempts,
                             settings.backoff_base_seconds, settings.backoff_max_seconds)
        self.budget = budget or Budget.create(
            policy, requests_per_minute=settings.requests_per_minute,
            concurrency=settings.concurrency)

    async def complete(self, request: LLMRequest) -> LLMResponse:
        params = build_params(request, self.model)
        started = time.monotonic()

        async def once(remaining: float) -> Any:
            try:
                return await self.client.messages.create(**params, timeout=max(0.1, remaining))
            except anthropic.AnthropicError as exc:
                raise classify(exc) from exc
            except TypeError as exc:  # the SDK's "could not resolve authentication method"
                kind = "auth" if "authentication" in str(exc) else "client_error"
                raise LLMError(kind, f"the SDK refused the request: {kind}",
                               retryable=False) from exc

        message, attempts = await call_with_retries(self.budget, once)
        latency_ms = int((time.monotonic() - started) * 1000)
        response = to_response(message, latency_ms, attempts)
        log.debug("anthropic: %s stop=%s in=%d out=%d cache_read=%d attempts=%d %dms",
                  response.model, response.stop_reason, response.usage.input_tokens,
                  response.usage.output_tokens, response.usage.cache_read_input_tokens,
                  attempts, latency_ms)
        return response

    @property
    def has_credentials(self) -> bool:
        return bool(getattr(self.client, "api_key", None)
                    or getattr(self.client, "auth_token", None))

    async def aclose(self) -> None:
        await self.client.close()

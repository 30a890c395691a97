"""Choose the provider from settings, and price token usage.

``make_provider(settings)`` returns the Anthropic provider for ``llm.provider == "anthropic"``,
the cloud provider (:mod:`agents.providers.anthropic_cloud`) for ``bedrock``/``vertex``,
the local provider (:mod:`agents.providers.anthropic_local`: vLLM, Ollama, llama.cpp at
``llm.base_url``, a declared model) for ``local`` and :class:`OfflineProvider` otherwise.
The offline provider has no model behind it: its ``complete`` raises a permanent
``LLMError("offline")``; each worker checks :func:`is_offline` and runs its own
deterministic, documented heuristic instead (the judge: :mod:`agents.judge.offline`). That
keeps demos and degraded mode free of network calls.

Prices come from the model catalogue (:mod:`agents.providers.catalogue`). The configured
model must be in it: :func:`make_provider` refuses an unknown one at start (no default price).
A local server's model is declared instead: zero, or the operator's models-file prices.
"""

from __future__ import annotations

import logging
from typing import Protocol

from agents.errors import AgentsError, LLMError
from agents.providers import catalogue
from agents.providers.base import LLMRequest, LLMResponse, Provider, TokenUsage, is_offline
from agents.providers.catalogue import model_entry
from agents.providers.settings import LLMSettings

#: ``is_offline`` and ``model_entry`` live with the facts they read (a provider, the
#: catalogue); callers look them up here, next to ``make_provider``.
__all__ = ["OFFLINE_MODEL", "OfflineProvider", "cost_usd", "is_offline", "make_provider",
           "model_entry", "require_credentials"]


class _WithLLM(Protocol):
    """Whatever carries the ``llm`` section (``agents.settings.Settings``); typed this way
    so that the seam never imports the whole configuration (no cycle through it)."""

    @property
    def llm(self) -> LLMSettings: ...

log = logging.getLogger(__name__)
OFFLINE_MODEL = "offline-heuristic-v1"
_warned: set[str] = set()


class OfflineProvider:
    """Stands for "no LLM": workers detect it with :func:`is_offline` and use a heuristic."""

    name = "offline"

    def __init__(self, model: str = OFFLINE_MODEL) -> None:
        self.model = model

    async def complete(self, request: LLMRequest) -> LLMResponse:
        raise LLMError("offline", "the offline provider has no model; use the worker's "
                       "heuristic", retryable=False)


def make_provider(settings: _WithLLM, *, base_url: str | None = None,
                  api_key: str | None = None) -> Provider:
    """``base_url``/``api_key`` default to ``ANTHROPIC_BASE_URL``/``ANTHROPIC_API_KEY``."""
    if settings.llm.provider == "anthropic":
        # imported when chosen: the SDK takes ~1.7 s to import, which offline runs never pay
        from agents.providers.anthropic import AnthropicProvider

        model_entry(settings.llm)  # fail fast: an unknown model has no price and no facts

        return AnthropicProvider(settings.llm, base_url=base_url, api_key=api_key)
    if settings.llm.provider in ("bedrock", "vertex"):
        from agents.providers.anthropic_cloud import CloudProvider

        model_entry(settings.llm)
        return CloudProvider(settings.llm, settings.llm.provider, base_url=base_url)
    if settings.llm.provider == "local":
        from agents.providers.anthropic_local import LocalProvider

        return LocalProvider(settings.llm, base_url=base_url)
    return OfflineProvider()


async def release(provider: Provider) -> None:
    """Close ``provider``'s HTTP client, if it has one. Whoever makes a provider releases it on
    every exit, start-up refusals included: an SDK client dropped open is closed by the SDK's
    finaliser on whatever event loop is running when it is collected, and fails there."""
    close = getattr(provider, "aclose", None)
    if close is not None:
        await close()


def require_credentials(provider: Provider) -> None:
    """Refuse to start a worker whose provider cannot authenticate (instead of sending every
    record to a dead-letter queue or a fallback result)."""
    if getattr(provider, "has_credentials", True) is False:
        hint = getattr(provider, "credentials_hint", None)
        if hint:
            raise AgentsError(f"llm.provider is {provider.name} but no credentials were found: "
                              f"{hint}; or set JUDGEFLOW_LLM__PROVIDER=offline")
        raise AgentsError("llm.provider is anthropic but ANTHROPIC_API_KEY is not set; set it, "
                          "or set JUDGEFLOW_LLM__PROVIDER=offline")


def cost_usd(usage: TokenUsage, model: str, llm: LLMSettings, *, batch: bool = False) -> float:
    """What ``usage`` cost. ``input_tokens`` excludes cache reads and writes (API semantics).
    A reply naming a model the catalogue lacks is priced as the configured model (checked at
    start), with one warning."""
    if model == OFFLINE_MODEL or usage == TokenUsage():
        return 0.0  # nothing was paid (offline, or settled in code: type drift)
    cat = catalogue.load(llm.models_file)
    # a local server's answers are priced as its declared model, never as a Claude model
    entry = model_entry(llm) if llm.provider == "local" else cat.find(model)
    if entry is None:
        if model not in _warned:
            _warned.add(model)
            log.warning("the API answered as model %r, not in the catalogue; pricing it as %s",
                        model, llm.model)
        entry = cat.get(llm.model)
    return catalogue.cost_usd(entry, input_tokens=usage.input_tokens,
                              output_tokens=usage.output_tokens,
                              cache_read=usage.cache_read_input_tokens,
                              cache_write=usage.cache_creation_input_tokens, ttl=llm.cache_ttl,
                              batch=batch)

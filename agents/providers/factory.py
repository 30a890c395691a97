"""Choose the provider from settings, and price token usage.

``make_provider(settings)`` returns the Anthropic provider for ``llm.provider == "anthropic"``
and :class:`OfflineProvider` otherwise. The offline provider has no model behind it: its
``complete`` raises a permanent ``LLMError("offline")``; each worker checks
:func:`is_offline` and runs its own deterministic, documented heuristic instead (the judge:
:mod:`agents.judge.offline`). That keeps demos and degraded mode free of network calls.

Prices are USD per million tokens: ``llm.prices[model]`` from settings first, then the small
table of known Claude models below (matched by prefix), then ``llm.default_price``.
"""

from __future__ import annotations

from agents.errors import AgentsError, LLMError
from agents.providers.base import LLMRequest, LLMResponse, Provider, TokenUsage
from streams.settings import LLMSettings, PriceSettings, Settings

OFFLINE_MODEL = "offline-heuristic-v1"

#: Public list prices (USD / MTok) of current Claude models, longest prefix wins.
KNOWN_PRICES: dict[str, PriceSettings] = {
    "claude-opus-4-5": PriceSettings(input=5.0, output=25.0, cache_read=0.5, cache_write=6.25),
    "claude-opus-4": PriceSettings(input=15.0, output=75.0, cache_read=1.5, cache_write=18.75),
    "claude-sonnet-4": PriceSettings(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75),
    "claude-haiku-4-5": PriceSettings(input=1.0, output=5.0, cache_read=0.1, cache_write=1.25),
    "claude-3-5-haiku": PriceSettings(input=0.8, output=4.0, cache_read=0.08, cache_write=1.0),
}


class OfflineProvider:
    """Stands for "no LLM": workers detect it with :func:`is_offline` and use a heuristic."""

    name = "offline"

    def __init__(self, model: str = OFFLINE_MODEL) -> None:
        self.model = model

    async def complete(self, request: LLMRequest) -> LLMResponse:
        raise LLMError("offline", "the offline provider has no model; use the worker's "
                       "heuristic", retryable=False)


def make_provider(settings: Settings, *, base_url: str | None = None,
                  api_key: str | None = None) -> Provider:
    """``base_url``/``api_key`` default to ``ANTHROPIC_BASE_URL``/``ANTHROPIC_API_KEY``."""
    if settings.llm.provider == "anthropic":
        from agents.providers.anthropic import AnthropicProvider

        return AnthropicProvider(settings.llm, base_url=base_url, api_key=api_key)
    return OfflineProvider()


def require_credentials(provider: Provider) -> None:
    """Refuse to start a worker whose provider cannot authenticate (instead of sending every
    record to a dead-letter queue or a fallback result)."""
    if getattr(provider, "has_credentials", True) is False:
        raise AgentsError("llm.provider is anthropic but ANTHROPIC_API_KEY is not set; set it, "
                          "or set JUDGEFLOW_LLM__PROVIDER=offline")


def is_offline(provider: Provider) -> bool:
    return provider.name == "offline"


def price_for(model: str, llm: LLMSettings) -> PriceSettings:
    if model in llm.prices:
        return llm.prices[model]
    for prefix in sorted(KNOWN_PRICES, key=len, reverse=True):
        if model.startswith(prefix):
            return KNOWN_PRICES[prefix]
    return llm.default_price


def cost_usd(usage: TokenUsage, model: str, llm: LLMSettings) -> float:
    """What ``usage`` cost. ``input_tokens`` excludes cache reads and writes (API semantics)."""
    if model == OFFLINE_MODEL:
        return 0.0
    p = price_for(model, llm)
    total = (usage.input_tokens * p.input + usage.output_tokens * p.output
             + usage.cache_read_input_tokens * p.cache_read
             + usage.cache_creation_input_tokens * p.cache_write)
    return round(total / 1_000_000, 8)

"""Provider protocol: one request/response shape for every LLM backend.

The request separates the *static prefix* (``system`` blocks: instructions, skill, rubric —
identical across cells of one criterion, marked ``cache=True`` for prompt caching) from the
patient- or encounter-specific ``messages`` that come last.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from agents.errors import LLMError


@dataclass(frozen=True)
class SystemBlock:
    text: str
    #: Mark the end of a cacheable prefix (Anthropic ``cache_control: ephemeral``).
    cache: bool = False


@dataclass(frozen=True)
class LLMRequest:
    system: tuple[SystemBlock, ...]
    #: Anthropic-style messages: ``{"role": "user"|"assistant", "content": str | list}``.
    messages: tuple[dict[str, Any], ...]
    max_tokens: int = 1024
    #: Tool definitions (``{"name", "description", "input_schema", "strict"?}``).
    tools: tuple[dict[str, Any], ...] = ()
    #: ``"auto"`` (the only choice the newest models accept alongside tools) or ``"none"``.
    tool_choice: Literal["auto", "none"] = "auto"
    #: JSON Schema for structured output (``output_config.format``), if used. No sampling
    #: parameters exist: API version 2026-10-21 rejects temperature/top_p/top_k outright.
    output_schema: dict[str, Any] | None = None
    #: Free-form labels for logs/metrics (never PHI): e.g. ``{"worker": "judge"}``.
    labels: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    input: Any


@dataclass(frozen=True)
class TokenUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_input_tokens + other.cache_read_input_tokens,
            self.cache_creation_input_tokens + other.cache_creation_input_tokens,
        )


@dataclass(frozen=True)
class LLMResponse:
    text: str
    tool_calls: tuple[ToolCall, ...]
    #: ``end_turn`` | ``tool_use`` | ``max_tokens`` | ``refusal`` | ``stop_sequence`` | ...
    stop_reason: str
    usage: TokenUsage
    model: str
    latency_ms: int
    #: Calls made for this response (retries included).
    attempts: int = 1
    #: The assistant's content blocks exactly as the API returned them (``thinking`` and
    #: ``redacted_thinking`` with their signatures, ``text``, ``tool_use``), as dicts. A
    #: conversation that continues after a tool call sends these back UNMODIFIED as the
    #: assistant turn: the API rejects a continued turn whose thinking blocks are missing or
    #: changed. Empty when the provider does not supply them.
    content: tuple[dict[str, Any], ...] = ()
    #: Answered through the Message Batches API (priced with the batch discount).
    batch: bool = False

    def assistant_turn(self) -> dict[str, Any]:
        """This reply as the assistant message of a continued conversation."""
        return {"role": "assistant", "content": [dict(b) for b in self.content]}


class Provider(Protocol):
    """Raises :class:`agents.errors.LLMError` on failure (after bounded retries)."""

    name: str
    model: str

    async def complete(self, request: LLMRequest) -> LLMResponse: ...


def is_offline(provider: Provider) -> bool:
    """The offline provider stands for "no LLM": the worker uses its heuristic instead."""
    return provider.name == "offline"


class NoBatchesAPI:
    """For an endpoint without the Message Batches API (Bedrock, Vertex, on-prem servers):
    every batch call is one clear, permanent error. Put it before the provider class."""

    #: the endpoint's name in the error (set by the provider)
    batch_host: str = "this endpoint"

    def _no_batches(self) -> LLMError:
        return LLMError("unsupported", f"{self.batch_host} has no Message Batches API; run "
                        "the replay without --batch (live calls)", retryable=False)

    async def submit_batch(self, items: Sequence[tuple[str, LLMRequest]]
                           ) -> list[tuple[str, list[str]]]:
        raise self._no_batches()

    async def batch_status(self, batch_id: str) -> Any:
        raise self._no_batches()

    async def batch_results(self, batch_id: str) -> Any:
        raise self._no_batches()

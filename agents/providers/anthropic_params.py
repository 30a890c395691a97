"""Pure translation between our request/response shapes and the Messages API (tested).

What a model accepts is read from its catalogue entry, never guessed from its name:

* forced ``tool_choice`` (``any``/``tool``) and non-default sampling parameters are never
  sent to a model that refuses them (the 5.x models answer 400);
* adaptive-thinking models get at least ``llm.max_tokens`` (thinking counts toward it) and
  ``output_config.effort`` when ``llm.effort`` is set and the model lists that effort;
* the reply's content blocks are kept as the API sent them (:attr:`LLMResponse.content`).
"""

from __future__ import annotations

from typing import Any

from agents.providers.base import LLMRequest, LLMResponse, TokenUsage, ToolCall
from agents.providers.catalogue import ModelEntry

#: A model missing from the catalogue is treated as the strictest current model.
STRICT = ModelEntry(id="unknown", input=0, output=0, cache_write_5m=0, cache_write_1h=0,
                    cache_read=0, min_cache_tokens=0, adaptive_thinking=True,
                    forced_tool_choice=False, sampling_params=False)
SAMPLING = ("temperature", "top_p", "top_k")


def cache_control(ttl: str = "5m") -> dict[str, str]:
    return {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": ttl}


def build_params(request: LLMRequest, model: str, entry: ModelEntry | None = None, *,
                 max_tokens_floor: int = 0, effort: str | None = None,
                 cache_ttl: str = "5m") -> dict[str, Any]:
    """The keyword arguments of ``messages.create`` for ``request``."""
    entry = entry or STRICT
    system = []
    for block in request.system:
        item: dict[str, Any] = {"type": "text", "text": block.text}
        if block.cache:
            item["cache_control"] = cache_control(cache_ttl)
        system.append(item)
    max_tokens = request.max_tokens
    if entry.adaptive_thinking:
        max_tokens = max(max_tokens, max_tokens_floor)
    params: dict[str, Any] = {"model": model, "max_tokens": max_tokens,
                              "messages": list(request.messages)}
    if system:
        params["system"] = system
    if request.tools:
        params["tools"] = list(request.tools)
        choice = request.tool_choice
        if choice not in ("auto", "none") and not entry.forced_tool_choice:
            choice = "auto"
        params["tool_choice"] = {"type": choice}
    if entry.sampling_params:
        params.update({k: v for k, v in request.sampling.items() if k in SAMPLING})
    output: dict[str, Any] = {}
    if request.output_schema is not None:
        output["format"] = {"type": "json_schema", "schema": request.output_schema}
    if effort is not None and effort in entry.efforts:
        output["effort"] = effort
    if output:
        params["output_config"] = output
    return params


def block_dict(block: Any) -> dict[str, Any]:
    """A content block exactly as received (fields the server sent, nothing added)."""
    if isinstance(block, dict):
        return dict(block)
    to_dict = getattr(block, "to_dict", None)
    if to_dict is not None:
        out: dict[str, Any] = to_dict(mode="json")
        return out
    dumped: dict[str, Any] = block.model_dump(mode="json", exclude_none=True)
    return dumped


def to_response(message: Any, latency_ms: int, attempts: int) -> LLMResponse:
    texts: list[str] = []
    calls: list[ToolCall] = []
    blocks = tuple(message.content or ())
    for block in blocks:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            calls.append(ToolCall(block.id, block.name, block.input))
    u = message.usage
    usage = TokenUsage(u.input_tokens or 0, u.output_tokens or 0,
                       u.cache_read_input_tokens or 0, u.cache_creation_input_tokens or 0)
    return LLMResponse("".join(texts), tuple(calls), message.stop_reason or "unknown", usage,
                       message.model, latency_ms, attempts,
                       tuple(block_dict(b) for b in blocks))

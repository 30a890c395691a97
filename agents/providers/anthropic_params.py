"""Pure translation between our request/response shapes and the Messages API (tested).

Every request is valid for API version 2026-10-21 (what the SDK 2.x sends): no
``temperature``/``top_p``/``top_k`` ever (rejected even at their defaults), no ``document``
block in an assistant message and no ``citations`` on a user text block (both 400; the
first raises :class:`ValueError` here, the second is dropped).

What a model accepts comes from the Models API (:class:`ModelFacts`) and, where the API
does not say, from its catalogue entry; never from its name:

* forced ``tool_choice`` (``any``/``tool``) only where the catalogue allows it;
* adaptive-thinking models get at least ``llm.max_tokens`` (thinking counts toward it),
  capped at the model's ``max_tokens``; ``output_config.effort`` when ``llm.effort`` is set
  and the model lists that effort;
* ``output_config.format`` (structured outputs) only for a model that supports it;
* the reply's content blocks are kept as the API sent them (:attr:`LLMResponse.content`).
"""

from __future__ import annotations

from typing import Any

from agents.providers.base import LLMRequest, LLMResponse, TokenUsage, ToolCall
from agents.providers.catalogue import ModelEntry
from agents.providers.model_facts import UNKNOWN, ModelFacts

#: A model missing from the catalogue is treated as the strictest current model.
STRICT = ModelEntry(id="unknown", input=0, output=0, cache_write_5m=0, cache_write_1h=0,
                    cache_read=0, min_cache_tokens=0, forced_tool_choice=False)


def cache_control(ttl: str = "5m") -> dict[str, str]:
    return {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": ttl}


def valid_messages(messages: tuple[dict[str, Any], ...],
                   cache_ttl: str = "5m") -> list[dict[str, Any]]:
    """The messages as 2026-10-21 accepts them: citations dropped from user text blocks; a
    document block in an assistant message is our bug (ValueError), never sent. A block that
    asks for a cache breakpoint (any ``cache_control``) gets the configured lifetime, as the
    system's do: the cost is priced at ``llm.cache_ttl``."""
    out: list[dict[str, Any]] = []
    for n, m in enumerate(messages):
        content = m.get("content")
        if isinstance(content, str):
            out.append(m)
            continue
        blocks = []
        for block in content or ():
            kind = block.get("type") if isinstance(block, dict) else None
            if m.get("role") == "assistant" and kind == "document":
                raise ValueError(f"messages.{n}: a document block in an assistant message "
                                 "is rejected by API version 2026-10-21")
            if m.get("role") == "user" and kind == "text" and "citations" in block:
                block = {k: v for k, v in block.items() if k != "citations"}
            if isinstance(block, dict) and "cache_control" in block:
                block = {**block, "cache_control": cache_control(cache_ttl)}
            blocks.append(block)
        out.append({**m, "content": blocks})
    return out


def build_params(request: LLMRequest, model: str, entry: ModelEntry | None = None, *,
                 max_tokens_floor: int = 0, effort: str | None = None,
                 cache_ttl: str = "5m", facts: ModelFacts | None = None) -> dict[str, Any]:
    """The keyword arguments of ``messages.create`` for ``request``. ``facts`` None: the
    Models API has not answered; effort is sent as configured, and no structured outputs:
    ``output_config.format`` on a model without them is a permanent 400, while the answer
    without it (the judge's JSON text, the debrief's tool) is accepted by every model and
    validated in code either way."""
    entry = entry or STRICT
    known = facts is not None
    facts = facts or UNKNOWN
    system = []
    for block in request.system:
        item: dict[str, Any] = {"type": "text", "text": block.text}
        if block.cache:
            item["cache_control"] = cache_control(cache_ttl)
        system.append(item)
    max_tokens = request.max_tokens
    if facts.adaptive_thinking:
        max_tokens = max(max_tokens, max_tokens_floor)
    if facts.max_tokens:
        max_tokens = min(max_tokens, facts.max_tokens)
    params: dict[str, Any] = {"model": model, "max_tokens": max_tokens,
                              "messages": valid_messages(request.messages, cache_ttl)}
    if system:
        params["system"] = system
    if request.tools:
        params["tools"] = list(request.tools)
        choice = request.tool_choice
        if choice not in ("auto", "none") and not entry.forced_tool_choice:
            choice = "auto"
        params["tool_choice"] = {"type": choice}
    output: dict[str, Any] = {}
    if request.output_schema is not None and facts.structured_outputs:
        output["format"] = {"type": "json_schema", "schema": request.output_schema}
    if effort is not None and (not known or effort in facts.efforts):
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

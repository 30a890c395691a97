"""What the fake Anthropic API checks and simulates (see :mod:`tools.fakes.fake_anthropic`).

Token estimate (documented, deterministic): ``ceil(characters / 3.5)`` of the compact JSON
of the request's tools, system blocks and message contents, in that order (the order the
API builds its cache prefix in).
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import math
import re
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

from tools.fakes.fake_models import FakeModel as ModelEntry
from tools.fakes.fake_reply import Reply
from tools.fakes.fake_tier import Buckets, Tier, retry_after
from tools.fakes.fake_tool_rules import tool_problem


class _Models(Protocol):
    """What ``model_info``/``model_list`` read of the server (``FakeAnthropic``)."""

    models: dict[str, ModelEntry]

#: API versions the fake knows (the migration guide: 2023-06-01 -> 2026-10-21).
VERSIONS = ("2023-06-01", "2026-10-21")
CURRENT = "2026-10-21"
SAMPLING = ("temperature", "top_p", "top_k")
CHARS_PER_TOKEN = 3.5
MAX_BREAKPOINTS = 4
#: blocks before a breakpoint at which the API looks for a cached prefix (prompt caching docs)
LOOKBACK = 20
SECRET = b"fake-anthropic-thinking-signature"
#: JSON-schema keywords structured outputs and strict tools refuse (the docs' limitations).
UNSUPPORTED = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                         "multipleOf", "minLength", "maxLength", "maxItems", "uniqueItems",
                         "minProperties", "maxProperties", "patternProperties",
                         "if", "then", "else", "not", "dependentRequired"})
#: Regex features the constrained decoder does not support.
BAD_REGEX = re.compile(r"\\[1-9]|\(\?<?[=!]|\\[bB]")


@dataclass
class State:
    #: Cached prefix hashes (per model).
    cache: set[str] = field(default_factory=set)
    #: tool_use id -> the thinking blocks of the reply that issued it.
    issued: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    tier: Tier = field(default_factory=Tier)
    buckets: Buckets | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.buckets = Buckets(self.tier, time.monotonic())

    @property
    def limits(self) -> Buckets:
        assert self.buckets is not None
        return self.buckets


def _reply(status: int, body: Any) -> Reply:
    return Reply(status, body)


def invalid(message: str) -> Reply:
    return _reply(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                   "message": message}})


def not_found(model: str) -> Reply:
    return _reply(404, {"type": "error", "error": {"type": "not_found_error",
                                                   "message": f"model: {model}"}})


def model_info(fake: _Models, model_id: str) -> Reply:
    """``GET /v1/models/{id}``: the ModelInfo (a retired model is still listed, with
    ``lifecycle: retired``, as the SDK documents); 404 only for an unknown id."""
    entry = fake.models.get(model_id)
    if entry is None:
        return not_found(model_id)
    return _reply(200, copy.deepcopy(entry.info))


def model_list(fake: _Models) -> Reply:
    data = [copy.deepcopy(m.info) for m in fake.models.values()]
    return _reply(200, {"data": data, "has_more": False,
                        "first_id": data[0]["id"] if data else None,
                        "last_id": data[-1]["id"] if data else None})


def version_of(headers: dict[str, str]) -> str | None:
    return headers.get("anthropic-version")


def version_header_problem(version: str | None) -> Reply | None:
    if version is None:
        return invalid("anthropic-version: header is required")
    if version not in VERSIONS:
        return invalid(f"anthropic-version: {version!r} is not a valid version")
    return None


def version_problem(body: dict[str, Any], version: str | None) -> Reply | None:
    """What API version 2026-10-21 rejects for every model (the migration guide)."""
    if version != CURRENT:
        return None
    for key in SAMPLING:
        if key in body:
            return invalid(f"{key}: Extra inputs are not permitted")
    for n, m in enumerate(body.get("messages") or []):
        content = m.get("content")
        if isinstance(content, str):
            continue
        for i, b in enumerate(content or []):
            if m.get("role") == "assistant" and b.get("type") == "document":
                return invalid(f"messages.{n}.content.{i}: document blocks are not permitted "
                               "in assistant messages")
            if m.get("role") == "user" and b.get("type") == "text" and b.get("citations"):
                return invalid(f"messages.{n}.content.{i}.citations: citations are not "
                               "permitted on text blocks in user messages")
    return None


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()


def fingerprint(body: dict[str, Any]) -> dict[str, Any]:
    """What the API keeps of a request for cache diagnostics: hashes and token counts."""
    messages = body.get("messages") or []
    return {"model": body.get("model"), "system": _digest(body.get("system")),
            "tools": _digest(body.get("tools")),
            "messages": [_digest(m) for m in messages],
            "tokens": estimate(segments(body))}


def cache_miss_reason(before: dict[str, Any] | None, now: dict[str, Any]
                      ) -> dict[str, Any] | None:
    """The first divergence between two fingerprints, as the cache-diagnostics guide
    lists the reasons (None: the new request only appended messages)."""
    if before is None:
        return {"type": "previous_message_not_found"}
    missed = int(before["tokens"])
    for kind in ("model", "system", "tools"):
        if before[kind] != now[kind]:
            return {"type": f"{kind}_changed", "cache_missed_input_tokens": missed}
    old, new = before["messages"], now["messages"]
    if new[:len(old)] != old:
        return {"type": "messages_changed", "cache_missed_input_tokens": missed}
    return None


def sign(thinking: str) -> str:
    return hmac.new(SECRET, thinking.encode(), hashlib.sha256).hexdigest()


def segments(body: dict[str, Any]) -> list[dict[str, Any]]:
    """Tools, system blocks, then message content blocks: the cache-prefix order."""
    out: list[dict[str, Any]] = [dict(t) for t in body.get("tools") or []]
    system = body.get("system") or []
    out += [{"type": "text", "text": system}] if isinstance(system, str) else list(system)
    for m in body.get("messages") or []:
        content = m.get("content")
        out += [{"type": "text", "text": content}] if isinstance(content, str) else content
    return out


def estimate(items: list[dict[str, Any]]) -> int:
    clean = [{k: v for k, v in i.items() if k != "cache_control"} for i in items]
    return max(1, math.ceil(len(json.dumps(clean, separators=(",", ":"))) / CHARS_PER_TOKEN))


def _schema_problem(node: Any, where: str) -> str | None:
    if isinstance(node, list):
        return next((p for i, n in enumerate(node) if (p := _schema_problem(n, f"{where}.{i}"))),
                    None)
    if not isinstance(node, dict):
        return None
    for key, value in node.items():
        if key in ("properties", "$defs", "definitions"):
            for name, sub in (value or {}).items():
                if (p := _schema_problem(sub, f"{where}.{key}.{name}")) is not None:
                    return p
            continue
        if key in UNSUPPORTED:
            return f"{where}: the JSON Schema keyword '{key}' is not supported"
        if key == "minItems" and isinstance(value, int) and value > 1:
            return f"{where}: minItems values other than 0 or 1 are not supported"
        if key == "pattern" and isinstance(value, str) and BAD_REGEX.search(value):
            return f"{where}: pattern uses unsupported regex features"
        if key == "additionalProperties" and value is not False:
            return f"{where}: additionalProperties must be false"
        nested = isinstance(value, dict | list) and key not in (
            "enum", "const", "required", "default", "examples")
        if nested and (p := _schema_problem(value, f"{where}.{key}")) is not None:
            return p
    return None


def _breakpoints(body: dict[str, Any]) -> int:
    return sum(1 for s in segments(body) if isinstance(s, dict) and "cache_control" in s) + \
        (1 if body.get("cache_control") else 0)


def _thinking_problem(body: dict[str, Any], state: State) -> str | None:
    for n, m in enumerate(body.get("messages") or []):
        if m.get("role") != "assistant" or isinstance(m.get("content"), str):
            continue
        blocks = m["content"]
        thinking = [b for b in blocks if b.get("type") in ("thinking", "redacted_thinking")]
        for b in thinking:
            if b.get("type") == "thinking" and b.get("signature") != sign(b.get("thinking", "")):
                return f"messages.{n}.content: invalid signature in thinking block"
        for b in blocks:
            if b.get("type") != "tool_use" or b.get("id") not in state.issued:
                continue
            if thinking != state.issued[b["id"]]:
                return (f"messages.{n}.content: the assistant turn that made a tool call must "
                        "start with its thinking blocks, passed back unmodified")
    return None


def validate(body: dict[str, Any], entry: ModelEntry, state: State,
             version: str | None = CURRENT) -> Reply | None:
    choice = (body.get("tool_choice") or {}).get("type")
    if choice in ("any", "tool") and not entry.forced_tool_choice:
        return invalid(f"tool_choice '{choice}' (forced tool use) is not supported by "
                       f"{entry.id}; use 'auto' or 'none'")
    if version != CURRENT and not entry.sampling_params:
        for key, default in (("temperature", 1), ("top_p", 1), ("top_k", None)):
            if key in body and body[key] is not None and body[key] != default:
                return invalid(f"{key}: non-default sampling parameters are not supported "
                               f"by {entry.id}")
    max_tokens = body.get("max_tokens")
    if isinstance(max_tokens, int) and max_tokens > entry.max_tokens:
        return invalid(f"max_tokens: {max_tokens} > {entry.max_tokens}, which is the maximum "
                       f"allowed number of output tokens for {entry.id}")
    if schema_requested(body) and not entry.structured_outputs:
        return invalid(f"output_config.format: structured outputs are not supported by "
                       f"{entry.id}")
    if not entry.manual_thinking and (body.get("thinking") or {}).get("type") == "enabled":
        return invalid(f"thinking.type 'enabled' (manual budget) is not supported by "
                       f"{entry.id}; it thinks adaptively, steer it with output_config.effort")
    effort = (body.get("output_config") or {}).get("effort")
    if effort is not None and effort not in entry.efforts:
        return invalid(f"output_config.effort '{effort}' is not supported by {entry.id}")
    schema = ((body.get("output_config") or {}).get("format") or {}).get("schema")
    if schema is not None and (p := _schema_problem(schema, "output_config.format.schema")):
        return invalid(p)
    for i, tool in enumerate(body.get("tools") or []):
        if tool.get("strict") and (p := _schema_problem(tool.get("input_schema"),
                                                        f"tools.{i}.input_schema")):
            return invalid(p)
    if (n := _breakpoints(body)) > MAX_BREAKPOINTS:
        return invalid(f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be "
                       f"provided. Found {n}.")
    if (p := tool_problem(body)) is not None:  # tool_use/tool_result pairing
        return invalid(p)
    return invalid(p) if (p := _thinking_problem(body, state)) is not None else None


def schema_requested(body: dict[str, Any]) -> bool:
    return ((body.get("output_config") or {}).get("format") or {}).get("schema") is not None


def _cache_plan(body: dict[str, Any], entry: ModelEntry, state: State
                ) -> tuple[int, int, int, list[str]]:
    """(total input, cache read, cache write, prefix hashes to cache); changes nothing."""
    items = segments(body)
    total = estimate(items)
    # the API matches a prefix by its content, not by where the breakpoints sit, and looks
    # for a cached prefix at each of the LOOKBACK blocks before a breakpoint: a conversation
    # that moves its breakpoint to the newest turn reads what the previous turn wrote
    bare = [{k: v for k, v in i.items() if k != "cache_control"} for i in items]

    def digest(n: int) -> str:
        return hashlib.sha256((entry.id + json.dumps(bare[:n], sort_keys=True)).encode()
                              ).hexdigest()

    marks = [(estimate(items[:i + 1]), i) for i, s in enumerate(items)
             if isinstance(s, dict) and "cache_control" in s]
    eligible = [(t, digest(i + 1)) for t, i in marks if t >= entry.min_cache_tokens]
    read = 0
    with state.lock:
        for t, i in marks:
            if t < entry.min_cache_tokens:
                continue
            hit = next((j for j in range(i + 1, max(0, i + 1 - LOOKBACK), -1)
                        if digest(j) in state.cache), None)
            if hit is not None:
                read = max(read, estimate(items[:hit]))
    write = max(0, max((t for t, _ in eligible), default=0) - read)
    return total, read, write, [h for _, h in eligible]


def input_cost(body: dict[str, Any], entry: ModelEntry, state: State) -> int:
    """What the request costs against the input-tokens limit: all but cache reads."""
    total, read, _, _ = _cache_plan(body, entry, state)
    return max(1, total - read)


def _usage(body: dict[str, Any], entry: ModelEntry, state: State) -> dict[str, int]:
    total, read, write, hashes = _cache_plan(body, entry, state)
    with state.lock:
        state.cache.update(hashes)
    return {"input_tokens": max(1, total - read - write), "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write}


def admit(body: dict[str, Any], entry: ModelEntry, state: State) -> Reply | None:
    """None when the tier admits the request (and charges it), else the 429."""
    refusal = state.limits.admit(input_cost(body, entry, state), time.monotonic())
    if refusal is None:
        return None
    name = {"requests": "requests", "input-tokens": "input tokens",
            "output-tokens": "output tokens"}[refusal.dimension]
    reply = Reply.error(429, message=f"This request would exceed your organization's rate "
                        f"limit of {state.tier.limit(refusal.dimension):,} {name} per minute.")
    reply.headers["retry-after"] = retry_after(refusal.retry_after, state.tier)
    return reply


def complete(reply: Reply, body: dict[str, Any], entry: ModelEntry, state: State) -> Reply:
    """A scripted message made real: model, thinking block, simulated usage."""
    out = copy.deepcopy(reply.body)
    think = out.pop("_thinking", True)
    out["model"] = out.get("model") or entry.id
    content = out["content"]
    if entry.adaptive_thinking and think and not any(
            b.get("type") in ("thinking", "redacted_thinking") for b in content):
        thought = f"Considering the request ({uuid.uuid4().hex[:8]})."
        content.insert(0, {"type": "thinking", "thinking": thought, "signature": sign(thought)})
    thinking = [b for b in content if b.get("type") in ("thinking", "redacted_thinking")]
    for b in content:
        if b.get("type") == "tool_use":
            state.issued[b["id"]] = copy.deepcopy(thinking)
    if out["usage"].get("input_tokens") is None:
        out["usage"].update(_usage(body, entry, state))
    return Reply(reply.status, out, reply.headers, reply.delay)


def rate_headers(state: State, reply: Reply) -> dict[str, str]:
    """Charge a sent message's output tokens, then report every bucket."""
    now = time.monotonic()
    body = reply.body
    if reply.status == 200 and isinstance(body, dict) and body.get("type") == "message":
        state.limits.charge_output(int(body["usage"].get("output_tokens") or 0), now)
    return state.limits.headers(now)

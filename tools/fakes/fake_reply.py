"""One scripted answer of the fake Anthropic API (status, JSON body, headers, delay).

Its own module so that the server (:mod:`tools.fakes.fake_anthropic`) and the rules it
applies (:mod:`tools.fakes.fake_rules`) both build replies without importing each other.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    #: Seconds to wait before answering (timeouts, latency benchmarks).
    delay: float = 0.0

    @classmethod
    def message(cls, *, text: str | None = None, tool_use: dict[str, Any] | None = None,
                stop_reason: str | None = None, model: str | None = None,
                input_tokens: int | None = None, output_tokens: int = 200,
                cache_read: int = 0, cache_write: int = 0, delay: float = 0.0,
                thinking: bool = True) -> Reply:
        """A Messages API response. ``tool_use`` = ``{"name": ..., "input": {...}}``.
        ``model`` None answers as the requested model; ``input_tokens`` None simulates usage
        (and prompt caching) from the request; ``thinking`` False omits the thinking block."""
        content: list[dict[str, Any]] = []
        if text is not None:
            content.append({"type": "text", "text": text})
        if tool_use is not None:
            content.append({"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}",
                            "name": tool_use["name"], "input": tool_use["input"]})
        reason = stop_reason or ("tool_use" if tool_use is not None else "end_turn")
        return cls(200, {
            "id": f"msg_{uuid.uuid4().hex[:24]}", "type": "message", "role": "assistant",
            "model": model, "content": content, "stop_reason": reason, "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens,
                      "cache_read_input_tokens": cache_read,
                      "cache_creation_input_tokens": cache_write},
            "_thinking": thinking,
        }, {}, delay)

    @classmethod
    def error(cls, status: int, *, retry_after: float | None = None,
              message: str = "scripted error", delay: float = 0.0,
              error_type: str | None = None, error_code: str | None = None) -> Reply:
        kinds = {400: "invalid_request_error", 401: "authentication_error",
                 402: "billing_error", 403: "permission_error", 404: "not_found_error",
                 413: "request_too_large", 429: "rate_limit_error", 500: "api_error",
                 504: "timeout_error", 529: "overloaded_error"}
        headers = {"x-should-retry": "true"} if status in (429, 500, 502, 503, 504, 529) else {}
        if retry_after is not None:
            headers["retry-after"] = f"{retry_after:g}"
        error: dict[str, Any] = {"type": error_type or kinds.get(status, "api_error"),
                                 "message": message}
        if error_code:  # where the API puts it and the SDK reads it (``exc.error_code``)
            error["details"] = {"error_code": error_code}
        return cls(status, {"type": "error", "error": error}, headers, delay)

    @classmethod
    def spend_limit(cls, code: str = "enforced_spend_limit_reached",
                    message: str = "Request not allowed.") -> Reply:
        """The 429 that waiting does not clear (``enforced_spend_limit_reached``: the tier's
        monthly limit; ``contract_spend_limit_reached``: the contract's). The message is
        deliberately bland: the code, not the wording, says what happened."""
        return cls.error(429, message=message, error_code=code)

    @classmethod
    def ramp_limit(cls, retry_after: float = 0.01) -> Reply:
        """The 429 of a ramp limit (usage grew too fast): retry after ``retry-after``."""
        return cls.error(429, retry_after=retry_after, message="Request not allowed.",
                         error_code="ramp_limit_exceeded")

"""SDK exceptions -> :class:`agents.errors.LLMError` with a stable ``kind`` (pure; tested).

Retryability follows the SDK's own rule (``_base_client._should_retry``): an
``x-should-retry: true`` / ``false`` header on the answer decides, whatever the status;
without it 408, 409 (lock timeout: ``conflict``), 429 and 5xx are retried.

Retryable: ``rate_limited`` (429), ``ramp_limited`` (429 ``ramp_limit_exceeded``: usage
grew faster than the ramp allows; back off for its ``retry-after``), ``overloaded`` (529),
``server_error`` (5xx, 504 included), ``timeout`` (408, client timeouts), ``conflict``
(409), ``connection``. Permanent: ``bad_request``, ``auth``, ``not_found``,
``request_too_large`` (413; a prompt over the context window is a 400 ``bad_request``: the
API gives it no ``error_code``, and its message is no cause), and the two that also stop
the provider (``HALTING``): ``spend_limit`` (a 429 whose ``error_code`` is a spend limit:
waiting does not clear it) and ``billing`` (402).

The cause is the SDK's ``APIStatusError.error_code`` (anthropic 2.16.0 ``_exceptions.py``:
``error.details.error_code`` of the body, "branch on it rather than on ``message``"), never
the message text, whose wording may change. An unknown code is treated as its bare status
and ``type``, as the SDK advises.
"""

from __future__ import annotations

from typing import Any

import anthropic

from agents.errors import LLMError

#: ``error.details.error_code`` of a 429 that waiting does not clear (the SDK's
#: ``ContractSpendLimitReachedError`` and ``EnforcedSpendLimitReachedError``).
SPEND_LIMIT_CODES = frozenset({"contract_spend_limit_reached", "enforced_spend_limit_reached"})
#: The 429 of a ramp limit (the SDK's ``RampLimitExceededError``): retry after retry-after.
RAMP_LIMIT_CODE = "ramp_limit_exceeded"
#: Kinds after which no call can succeed until an operator acts.
HALTING = frozenset({"spend_limit", "billing"})


def _retry_after(headers: Any) -> float | None:
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name) if headers is not None else None
        if value:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue
    return None


def _error_detail(exc: anthropic.APIStatusError) -> tuple[str, str, str | None]:
    """(error type, message, error code) from the body ``{"type":"error","error":{...}}``;
    the code as the SDK parsed it (``exc.error_code``)."""
    body: dict[str, Any] = exc.body if isinstance(exc.body, dict) else {}
    inner = body.get("error")
    err: dict[str, Any] = inner if isinstance(inner, dict) else body
    kind = str(err.get("type") or exc.type or "error")
    code = getattr(exc, "error_code", None)
    return kind, str(err.get("message") or "").strip(), code if isinstance(code, str) else None


def classify(exc: Exception) -> LLMError:
    """Map an SDK exception to an :class:`LLMError` (retryable vs permanent)."""
    if isinstance(exc, anthropic.APITimeoutError):
        return LLMError("timeout", "request timed out", retryable=True)
    if isinstance(exc, anthropic.APIConnectionError):
        return LLMError("connection", "connection failed", retryable=True)
    if isinstance(exc, anthropic.APIStatusError):
        return _classify_status(exc)
    if isinstance(exc, anthropic.AnthropicError):
        return LLMError("client_error", f"{type(exc).__name__}", retryable=False)
    raise exc


def should_retry(headers: Any) -> bool | None:
    """The server's explicit verdict (``x-should-retry``), or None when it gives none."""
    value = headers.get("x-should-retry") if headers is not None else None
    return {"true": True, "false": False}.get(str(value).strip().lower()) if value else None


def _classify_status(exc: anthropic.APIStatusError) -> LLMError:
    status = exc.status_code
    headers = exc.response.headers
    after = _retry_after(headers)
    verdict = should_retry(headers)
    etype, text, code = _error_detail(exc)
    message = (f"HTTP {status}: {etype}" + (f" ({code})" if code else "")
               + (f": {text[:200]}" if text else ""))

    def err(kind: str, retryable: bool, retry_after: float | None = None) -> LLMError:
        if verdict is not None and kind not in HALTING:
            retryable = verdict  # the server says; a halting error stays halting
        return LLMError(kind, message, retryable=retryable, retry_after=retry_after,
                        status=status)

    if status == 429 and code in SPEND_LIMIT_CODES:
        return err("spend_limit", False)  # waiting does not clear it
    if status == 429 and code == RAMP_LIMIT_CODE:
        return err("ramp_limited", True, after)
    if status == 429:
        return err("rate_limited", True, after)
    if status == 529 or etype == "overloaded_error":
        return err("overloaded", True, after)
    if status == 402 or etype == "billing_error":
        return err("billing", False)
    if status == 413:
        return err("request_too_large", False)
    if status in (401, 403):
        return err("auth", False)
    if status == 404:
        return err("not_found", False)
    if status == 408:
        return err("timeout", True, after)
    if status == 409:
        return err("conflict", True, after)
    if status >= 500:  # 500, 502, 503, 504
        return err("server_error", True, after)
    return err("bad_request", False)

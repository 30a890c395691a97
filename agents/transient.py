"""Transient LLM failures are not results, nor verdicts on the record.

A 429/529/5xx, a timeout, a connection error that survives our bounded retries, or a spend
limit says nothing about the record; publishing a fallback under the normal result id would
mean the record is never judged again. Instead the worker raises :class:`LLMUnavailable` (a
:class:`streams.errors.Unavailable`): the runner's circuit breaker pauses the worker's
partitions until the provider answers again and then handles the record once more
(:mod:`streams.breaker`). Only a record that keeps failing while the provider answers others
is dead-lettered, as ``error.type: llm_unavailable``, for ``judgeflow replay dlq``.
"""

from __future__ import annotations

from agents.errors import LLMError
from streams.errors import Unavailable

ERROR_TYPE = "llm_unavailable"
#: kinds that are transient whatever the provider says about ``retryable``.
#: ``spend_limit`` and ``billing`` are not retried within a call (waiting a few seconds does
#: not clear them), but the record itself was never judged: the breaker keeps it until an
#: operator raised the limit and a probe is answered.
TRANSIENT_KINDS = frozenset({"rate_limited", "ramp_limited", "overloaded", "timeout",
                             "connection", "server_error", "spend_limit", "billing"})


def is_transient(exc: LLMError) -> bool:
    return exc.retryable or exc.kind in TRANSIENT_KINDS


class LLMUnavailable(Unavailable):
    """The model could not be reached; the runner's breaker retries the record later."""

    def __init__(self, exc: LLMError) -> None:
        status = f" (HTTP {exc.status})" if exc.status else ""
        super().__init__(ERROR_TYPE, f"{exc.kind}{status} after retries")
        self.kind = exc.kind

"""Transient LLM failures are not results: they go to the DLQ as ``llm_unavailable``.

A 429/529/5xx, a timeout or a connection error that survives our bounded retries says
nothing about the record; publishing a fallback under the normal result id would mean the
record is never judged again. Instead the worker raises :class:`LLMUnavailable` (a
:class:`BadRecord`), the runner dead-letters it with ``error.type: llm_unavailable`` and
``judgeflow replay dlq`` re-drives it when the model is back.
"""

from __future__ import annotations

from agents.errors import LLMError
from streams.errors import BadRecord

ERROR_TYPE = "llm_unavailable"
#: kinds that are transient whatever the provider says about ``retryable``.
#: ``spend_limit`` and ``billing`` are not retried (waiting does not clear them) and the
#: provider stops calling, but the record itself was never judged: it waits in the DLQ until
#: the operator raises the limit and re-drives it.
TRANSIENT_KINDS = frozenset({"rate_limited", "overloaded", "timeout", "connection",
                             "server_error", "spend_limit", "billing"})


def is_transient(exc: LLMError) -> bool:
    return exc.retryable or exc.kind in TRANSIENT_KINDS


class LLMUnavailable(BadRecord):
    """The model could not be reached; dead-letter the record for a later replay."""

    def __init__(self, exc: LLMError) -> None:
        status = f" (HTTP {exc.status})" if exc.status else ""
        super().__init__(ERROR_TYPE, f"{exc.kind}{status} after retries; replay to retry")
        self.kind = exc.kind

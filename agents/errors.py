"""The root exception of the ``agents`` package and the LLM failure classes."""

from __future__ import annotations


class AgentsError(Exception):
    """Root of every error raised by the ``agents`` package."""


class LLMError(AgentsError):
    """An LLM call failed. ``retryable`` failures (429, 5xx, 529, timeouts, connection errors)
    may be retried within our own deadline; permanent ones (bad request, auth, refusal,
    invalid output) may not. ``kind`` is a stable token used in results and metrics."""

    def __init__(self, kind: str, message: str, *, retryable: bool,
                 retry_after: float | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status


class InvalidOutput(AgentsError):
    """The model answered, but the answer failed validation in code."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems

"""The root exception of the ``streams`` package and its subclasses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from streams.publisher import Output


class StreamsError(Exception):
    """Root of every error raised by the ``streams`` package."""


class BrokerError(StreamsError):
    """The embedded broker could not be started, reached or stopped."""


class BadRecord(StreamsError):
    """An input record that cannot be processed; it goes to the topic's dead-letter queue.

    ``error_type`` is the value of the ``error.type`` header (a short, stable token).
    ``after``: outputs the runner sends once the dead letter is acknowledged (e.g. the LLM
    journal's tombstone: a re-driven letter must pay for a fresh answer, not reuse the one
    it was dead-lettered for).
    """

    def __init__(self, error_type: str, message: str, after: Sequence[Output] = ()) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.after = tuple(after)


class Unavailable(BadRecord):
    """A service the handler needs (the LLM provider) did not answer: the record is not at
    fault. The runner keeps it and lets its circuit breaker pause the work
    (:mod:`streams.breaker`); only a record that keeps failing while the service answers
    others is dead-lettered, with this ``error_type``."""

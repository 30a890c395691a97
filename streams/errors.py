"""The root exception of the ``streams`` package and its subclasses."""

from __future__ import annotations


class StreamsError(Exception):
    """Root of every error raised by the ``streams`` package."""


class BadRecord(StreamsError):
    """An input record that cannot be processed; it goes to the topic's dead-letter queue.

    ``error_type`` is the value of the ``error.type`` header (a short, stable token).
    """

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message


class Unavailable(BadRecord):
    """A service the handler needs (the LLM provider) did not answer: the record is not at
    fault. The runner keeps it and lets its circuit breaker pause the work
    (:mod:`streams.breaker`); only a record that keeps failing while the service answers
    others is dead-lettered, with this ``error_type``."""

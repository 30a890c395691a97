"""The root exception of the ``streams`` package and its subclasses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class StreamsError(Exception):
    """Root of every error raised by the ``streams`` package."""


class BadRecord(StreamsError):
    """An input record that cannot be processed; it goes to the topic's dead-letter queue.

    ``error_type`` is the value of the ``error.type`` header (a short, stable token).
    ``after``: :class:`streams.publisher.Output` records the runner sends with the dead
    letter (e.g. the LLM journal's tombstone, an ``Output.last``: sent once the letter is
    acknowledged, so that a re-driven letter pays for a fresh answer instead of reusing the
    one it was dead-lettered for). Typed loosely: the publisher imports this module.
    """

    def __init__(self, error_type: str, message: str, after: Sequence[Any] = ()) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.after = tuple(after)


class Unavailable(BadRecord):
    """A service the handler needs (the LLM provider) did not answer: the record is not at
    fault. The runner keeps it and lets its circuit breaker pause the work
    (:mod:`streams.breaker`); only a record that keeps failing while the service answers
    others is dead-lettered, with this ``error_type``."""

"""The circuit breaker of an LLM-bound worker: an outage pauses the work, it dead-letters nothing.

States: ``closed`` (work flows), ``open`` (the provider is down: no new attempt starts, the
runner pauses its partitions), ``half_open`` (the backoff has passed: exactly one attempt,
the probe, may start). Evidence comes from two places:

* the provider answered (any call of any record: :func:`note_answered`, called by the one
  LLM accounting path, :class:`agents.providers.session.LLMSession`) -> ``closed``, backoff
  reset;
* a record's handler raised :class:`streams.errors.Unavailable` (the provider stayed down
  through the handler's own bounded retries) -> ``open``; a failed probe doubles the
  backoff (up to ``cap``).

A record fails *on its own* when the provider answered another record while it was failing
(an answer to another :class:`Ticket` after this one started; the record's own earlier
calls, e.g. the first turn before a failed repair, do not count): that does not trip the
breaker, and a record that fails on its own :data:`OWN_FAILURES` times is dead-lettered;
nothing else is.

Pure and clock-injected (:class:`CircuitBreaker`); the waiting (:meth:`wait_turn`) is the
only asyncio in here.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field

Clock = Callable[[], float]
CLOSED, OPEN, HALF_OPEN = "closed", "open", "half_open"
#: Gauge values of ``judgeflow_breaker_state``.
STATE_VALUES = {CLOSED: 0, OPEN: 1, HALF_OPEN: 2}
#: Failures of one record while the provider answered others, before it is dead-lettered.
OWN_FAILURES = 3


_IDS = itertools.count()


@dataclass(frozen=True)
class Ticket:
    """One admitted attempt: when it started, and whether it is the half-open probe."""

    started: float
    probe: bool
    id: int = field(default_factory=lambda: next(_IDS))


class CircuitBreaker:
    def __init__(self, base: float = 1.0, cap: float = 60.0,
                 clock: Clock = time.monotonic,
                 on_change: Callable[[str], None] | None = None) -> None:
        self.base, self.cap, self.clock = base, cap, clock
        self.on_change = on_change
        self.state = CLOSED
        self.backoff = base
        self.reopen_at = 0.0
        #: when the provider last answered an attempt that has ended
        self.last_answer = float("-inf")
        #: last answer per attempt still running (ticket id -> time)
        self._running: dict[int, float] = {}
        #: records waiting for admission whose probe never failed
        self.fresh_waiting = 0
        self.opened = 0  # how many times it opened (tests, logs)
        self._changed = asyncio.Event()

    # -- evidence ------------------------------------------------------------------
    def answered(self, ticket: Ticket | None = None) -> None:
        """The provider answered a call (of ``ticket``'s attempt): it is up."""
        if ticket is None:
            self.last_answer = self.clock()
        else:
            self._running[ticket.id] = self.clock()
        if self.state != CLOSED:
            self.backoff = self.base
            self._set(CLOSED)

    def failed(self, ticket: Ticket) -> bool:
        """The attempt of ``ticket`` ended unavailable. True: the record failed on its own
        (the provider answered another attempt since it started); False: an outage, the
        breaker is open."""
        self._running.pop(ticket.id, None)
        others = max([self.last_answer, *self._running.values()])
        self.last_answer = max(self.last_answer, self._ended(ticket))
        if others > ticket.started:
            if ticket.probe and self.state == HALF_OPEN:
                self._set(OPEN, reopen_now=True)  # another waiter probes at once
            return True
        if ticket.probe or self.state == CLOSED:
            if ticket.probe:
                self.backoff = min(self.cap, self.backoff * 2)
            self.opened += self.state == CLOSED
            self._set(OPEN)
        return False

    def finished(self, ticket: Ticket) -> None:
        """The attempt ended without being unavailable. A probe that made no call (e.g. a
        record settled in code) proved nothing: the next waiter probes at once."""
        self.last_answer = max(self.last_answer, self._ended(ticket))
        if ticket.probe and self.state == HALF_OPEN:
            self._set(OPEN, reopen_now=True)

    def _ended(self, ticket: Ticket) -> float:
        return self._running.pop(ticket.id, float("-inf"))

    # -- admission -----------------------------------------------------------------
    def admit(self, fresh: bool = True) -> Ticket | None:
        """A ticket if an attempt may start now, else None. A record whose probe failed
        before (not ``fresh``) probes only when no fresh record waits: a record that fails
        on its own must not be the only one ever asked while others queue behind it."""
        now = self.clock()
        if self.state == CLOSED:
            return Ticket(now, probe=False)
        if not fresh and self.fresh_waiting > 0:
            return None
        if self.state == OPEN and now >= self.reopen_at:
            self._set(HALF_OPEN)
            return Ticket(now, probe=True)
        return None

    def wait_seconds(self) -> float:
        """How long until :meth:`admit` may change its mind by time alone."""
        if self.state == OPEN:
            return max(0.0, self.reopen_at - self.clock())
        return float("inf") if self.state == HALF_OPEN else 0.0

    async def wait_turn(self, timeout: float, fresh: bool = True) -> Ticket | None:
        """Wait up to ``timeout`` seconds for admission (None: not yet; the caller checks
        whether it should still wait: stopping, partition revoked)."""
        deadline = self.clock() + timeout
        self.fresh_waiting += fresh
        try:
            while (ticket := self.admit(fresh)) is None:
                left = deadline - self.clock()
                if left <= 0:
                    return None
                changed = self._changed
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), min(left, self.wait_seconds()))
            return ticket
        finally:
            self.fresh_waiting -= fresh

    def _set(self, state: str, *, reopen_now: bool = False) -> None:
        if state == OPEN:
            self.reopen_at = self.clock() + (0.0 if reopen_now else self.backoff)
        changed = state != self.state
        self.state = state
        self._changed.set()
        self._changed = asyncio.Event()
        if changed and self.on_change is not None:
            self.on_change(state)


_CURRENT: contextvars.ContextVar[tuple[CircuitBreaker, Ticket] | None] = (
    contextvars.ContextVar("circuit_breaker", default=None))


def bind(breaker: CircuitBreaker, ticket: Ticket) -> None:
    """Make ``breaker`` the one :func:`note_answered` reports ``ticket``'s answers to, in the
    current task (the runner binds each attempt of a record in the record's own task)."""
    _CURRENT.set((breaker, ticket))


def note_answered() -> None:
    """The provider answered a call of the current task's record (no-op outside a worker)."""
    bound = _CURRENT.get()
    if bound is not None:
        bound[0].answered(bound[1])

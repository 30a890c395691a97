"""Call budgets for one worker process: deadline-bounded retries, pacing to the API tier
(:mod:`agents.providers.pacing`), a concurrency cap and a shared cool-down after 429/529.

Why our own loop: the SDK honours ``retry-after`` without an upper bound, so it runs with
no retries of its own (``llm.sdk_max_retries`` 0): every HTTP request passes the limiter
here, and a retry-after that would end past *our* deadline is not waited for. A 429 or 529
seen by any call trips a process-wide cool-down that every later attempt waits out, so a
worker that is being rate limited slows down as a whole instead of spinning on retries.

Order of one attempt: a concurrency slot (``llm.concurrency`` stays an upper bound), then
the cool-down and the pacer, in arrival order, then the call. The provider feeds every
answer's rate-limit headers and usage to :meth:`Budget.observe` from inside the call.

Nothing here knows about a vendor: a call is any ``async () -> T`` that raises
:class:`agents.errors.LLMError`.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from agents.errors import LLMError
from agents.providers.pacing import Cost, Pacer

log = logging.getLogger(__name__)
T = TypeVar("T")
#: Answers that slow every request of the worker (the shared cool-down), not just this one:
#: a ramp limit caps how fast usage grows, so a retry of the same call alone would not help.
COOLING_KINDS = frozenset({"rate_limited", "ramp_limited", "overloaded"})
Clock = Callable[[], float]


class CoolDown:
    """A shared "nobody sends before T" mark, pushed forward by 429/529 answers."""

    def __init__(self, clock: Clock = time.monotonic) -> None:
        self.clock = clock
        self.until = 0.0

    def trip(self, seconds: float) -> None:
        self.until = max(self.until, self.clock() + max(0.0, seconds))

    def remaining(self) -> float:
        return max(0.0, self.until - self.clock())


@dataclass(frozen=True)
class RetryPolicy:
    deadline_seconds: float
    max_attempts: int
    backoff_base: float = 1.0
    backoff_max: float = 30.0

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        """Wait before attempt ``attempt + 1``: the server's retry-after when given (we cap
        it with the deadline, not here), otherwise exponential with jitter."""
        if retry_after is not None and retry_after >= 0:
            return retry_after
        base = min(self.backoff_max, self.backoff_base * (2 ** (attempt - 1)))
        return base * (0.5 + random.random() / 2)


#: The expected cost of the request the current task is sending (see Budget.observe).
_IN_FLIGHT: contextvars.ContextVar[list[Cost]] = contextvars.ContextVar("llm_in_flight")


@dataclass
class Budget:
    """Everything one worker's calls share."""

    policy: RetryPolicy
    pacer: Pacer
    cooldown: CoolDown
    slots: asyncio.Semaphore
    turn: asyncio.Lock

    @classmethod
    def create(cls, policy: RetryPolicy, *, requests_per_minute: int, concurrency: int,
               minute_seconds: float = 60.0, clock: Clock = time.monotonic) -> Budget:
        pacer = Pacer(requests_per_minute, burst=concurrency, clock=clock,
                      minute_seconds=minute_seconds)
        return cls(policy, pacer, CoolDown(clock), asyncio.Semaphore(concurrency),
                   asyncio.Lock())

    def observe(self, headers: Any, *, input_tokens: int | None = None,
                output_tokens: int | None = None) -> None:
        """One answer of the current call: its usage (when it succeeded) and its headers.
        The call's own expected output leaves the in-flight total first, since the server
        has charged its real output by now."""
        held = _IN_FLIGHT.get(None)
        used = None
        if input_tokens is not None and output_tokens is not None:
            used = Cost(1, input_tokens, output_tokens)
            self.pacer.learn(input_tokens, output_tokens)
        if held:
            self.pacer.release(held.pop(), used)
        if headers is not None:
            before = self.pacer.limits()
            if self.pacer.observe(headers) and self.pacer.limits() != before:
                log.info("API tier from the rate-limit headers (per minute): %s", ", ".join(
                    f"{d} {v:,.0f}" for d, v in self.pacer.limits().items()))


async def call_with_retries(budget: Budget, call: Callable[[float], Awaitable[T]],
                            estimate: Cost | None = None) -> tuple[T, int]:
    """Run ``call(remaining_seconds)`` until it succeeds, a permanent error, ``max_attempts``
    or the deadline. ``estimate`` is the request's cost before anything was learned (default:
    one request, no tokens). Returns ``(result, attempts)``; raises the last
    :class:`LLMError` (a deadline overrun is ``LLMError("timeout", retryable=True)``)."""
    policy = budget.policy
    deadline = time.monotonic() + policy.deadline_seconds
    attempt = 0
    while True:
        attempt += 1
        remaining = deadline - time.monotonic()
        try:
            return await asyncio.wait_for(_attempt(budget, call, estimate or Cost(), deadline),
                                          max(0.0, remaining)), attempt
        except TimeoutError:
            raise LLMError("timeout", f"no answer within the {policy.deadline_seconds:g}s "
                           "deadline", retryable=True) from None
        except LLMError as exc:
            if exc.kind in COOLING_KINDS and exc.status is not None:
                budget.cooldown.trip(policy.backoff(attempt, exc.retry_after))
            if not exc.retryable or attempt >= policy.max_attempts:
                raise
            wait = max(policy.backoff(attempt, exc.retry_after), budget.cooldown.remaining())
            if time.monotonic() + wait >= deadline:
                log.info("llm %s: retry in %.1fs would pass the deadline; giving up", exc.kind,
                         wait)
                raise
            log.info("llm %s (attempt %d); retrying in %.2fs", exc.kind, attempt, wait)
            await asyncio.sleep(wait)


async def _attempt(budget: Budget, call: Callable[[float], Awaitable[T]], estimate: Cost,
                   deadline: float) -> T:
    async with budget.slots:  # the per-worker concurrency cap
        cost = await _wait_turn(budget, estimate, deadline)
        held = [cost]
        token = _IN_FLIGHT.set(held)
        try:
            return await call(deadline - time.monotonic())
        finally:
            _IN_FLIGHT.reset(token)
            if held:  # no answer was observed (connection error, timeout)
                budget.pacer.release(held.pop())


async def _wait_turn(budget: Budget, estimate: Cost, deadline: float) -> Cost:
    """Wait out the shared cool-down and the pacer (first come, first served), never past
    the deadline; take the request's expected cost from the buckets."""
    async with budget.turn:
        while True:
            cost = budget.pacer.expected(estimate)
            cooling = budget.cooldown.remaining()
            wait = max(cooling, budget.pacer.delay(cost))
            if wait <= 0:
                budget.pacer.take(cost)
                return cost
            if time.monotonic() + wait >= deadline:
                why = "cooling down after 429/529" if cooling else "the API tier has no room"
                raise LLMError("rate_limited", f"{why} for {wait:.1f}s, past the deadline",
                               retryable=True)
            # re-check often: an answer's headers may free room earlier than modelled
            await asyncio.sleep(min(wait, 0.25))

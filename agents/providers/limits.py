"""Call budgets for one worker process: deadline-bounded retries, a requests-per-minute
limiter, a concurrency cap and a shared cool-down after 429/529.

Why our own loop: the SDK honours ``retry-after`` without an upper bound, so it runs with
no retries of its own (``llm.sdk_max_retries`` 0): every HTTP request passes the limiter
here, and a retry-after that would end past *our* deadline is not waited for. A 429 or 529
seen by any call trips a process-wide cool-down that every later attempt waits out, so a
worker that is being rate limited slows down as a whole instead of spinning on retries.

Nothing here knows about a vendor: a call is any ``async () -> T`` that raises
:class:`agents.errors.LLMError`.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from agents.errors import LLMError

log = logging.getLogger(__name__)
T = TypeVar("T")
Clock = Callable[[], float]


class RateLimiter:
    """Token bucket: ``per_minute`` requests a minute, bursting up to ``burst`` at once."""

    def __init__(self, per_minute: int, burst: int = 1, clock: Clock = time.monotonic) -> None:
        self.rate = per_minute / 60.0
        self.capacity = float(max(1, min(burst, per_minute)))
        self.tokens = self.capacity
        self.clock = clock
        self.updated = clock()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self.clock()
        self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
        self.updated = now

    def delay(self) -> float:
        """Seconds until a token is free (0 when one is free now). Does not take it."""
        self._refill()
        return 0.0 if self.tokens >= 1.0 else (1.0 - self.tokens) / self.rate

    async def acquire(self) -> None:
        async with self._lock:  # FIFO: waiters are served in arrival order
            while (wait := self.delay()) > 0:
                await asyncio.sleep(wait)
            self.tokens -= 1.0


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


@dataclass
class Budget:
    """Everything one worker's calls share."""

    policy: RetryPolicy
    limiter: RateLimiter
    cooldown: CoolDown
    slots: asyncio.Semaphore

    @classmethod
    def create(cls, policy: RetryPolicy, *, requests_per_minute: int, concurrency: int) -> Budget:
        return cls(policy, RateLimiter(requests_per_minute, burst=concurrency), CoolDown(),
                   asyncio.Semaphore(concurrency))


async def call_with_retries(budget: Budget, call: Callable[[float], Awaitable[T]]
                            ) -> tuple[T, int]:
    """Run ``call(remaining_seconds)`` until it succeeds, a permanent error, ``max_attempts``
    or the deadline. Returns ``(result, attempts)``; raises the last :class:`LLMError`
    (a deadline overrun is ``LLMError("timeout", retryable=True)``)."""
    policy = budget.policy
    deadline = time.monotonic() + policy.deadline_seconds
    attempt = 0
    while True:
        attempt += 1
        await _wait_turn(budget, deadline)
        remaining = deadline - time.monotonic()
        try:
            return await asyncio.wait_for(_in_slot(budget, call, deadline), remaining), attempt
        except TimeoutError:
            raise LLMError("timeout", f"no answer within the {policy.deadline_seconds:g}s "
                           "deadline", retryable=True) from None
        except LLMError as exc:
            if exc.kind in ("rate_limited", "overloaded"):
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


async def _in_slot(budget: Budget, call: Callable[[float], Awaitable[T]], deadline: float) -> T:
    async with budget.slots:  # the per-worker concurrency cap
        return await call(deadline - time.monotonic())


async def _wait_turn(budget: Budget, deadline: float) -> None:
    """Wait out the shared cool-down and the rate limiter, never past the deadline."""
    while (wait := budget.cooldown.remaining()) > 0:
        if time.monotonic() + wait >= deadline:
            raise LLMError("rate_limited", f"cooling down for {wait:.1f}s after 429/529, past "
                           "the deadline", retryable=True)
        await asyncio.sleep(wait)
    left = deadline - time.monotonic()
    try:
        await asyncio.wait_for(budget.limiter.acquire(), timeout=max(0.0, left))
    except TimeoutError:
        raise LLMError("rate_limited", "requests-per-minute limit: no slot before the deadline",
                       retryable=True) from None

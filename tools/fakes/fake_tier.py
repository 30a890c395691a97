"""The fake API's rate limits: one token bucket per dimension, like the real tiers.

Each bucket holds at most its per-minute limit and refills continuously at limit per
``minute_seconds`` (60 like the API; the benchmark shortens the minute to run in seconds).
A Messages request is admitted when there is a request left, its input cost (uncached
input plus cache writes; cache reads are free, as on the API) fits in the input bucket
(a request larger than the whole bucket needs a full one) and the output bucket is not
empty; admission charges the request and its input. Output tokens are charged when the
answer is sent, so a burst of long answers can drive the output bucket below zero and
the next requests wait. A refused request costs nothing and gets a 429 whose
``retry-after`` is the time until that bucket has room.

Pure apart from the lock: the time is always passed in.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field

DIMENSIONS = ("requests", "input-tokens", "output-tokens")


@dataclass(frozen=True)
class Tier:
    rpm: int = 4000
    itpm: int = 2_000_000
    otpm: int = 400_000
    minute_seconds: float = 60.0

    def limit(self, dim: str) -> int:
        return {"requests": self.rpm, "input-tokens": self.itpm, "output-tokens": self.otpm}[dim]


@dataclass
class Refusal:
    dimension: str
    retry_after: float


@dataclass
class Buckets:
    tier: Tier
    now: float
    levels: dict[str, float] = field(default_factory=dict)
    #: what was admitted / charged, and refusals per dimension (for the benchmark)
    spent: dict[str, float] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=dict)
    first: float | None = None
    last: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.levels = {d: float(self.tier.limit(d)) for d in DIMENSIONS}
        self.spent = dict.fromkeys(DIMENSIONS, 0.0)

    def rate(self, dim: str) -> float:
        return self.tier.limit(dim) / self.tier.minute_seconds

    def _refill(self, now: float) -> None:
        dt = max(0.0, now - self.now)
        self.levels = {d: min(float(self.tier.limit(d)), v + dt * self.rate(d))
                       for d, v in self.levels.items()}
        self.now = max(self.now, now)

    def admit(self, input_cost: int, now: float) -> Refusal | None:
        """Charge one request of ``input_cost`` or say which bucket refused it."""
        with self.lock:
            self._refill(now)
            need = {"requests": 1.0,
                    "input-tokens": float(min(input_cost, self.tier.itpm)),
                    "output-tokens": 1.0}
            short = {d: (n - self.levels[d]) / self.rate(d) for d, n in need.items()
                     if self.levels[d] < n}
            if short:
                dim = max(short, key=lambda d: short[d])
                self.refused[dim] = self.refused.get(dim, 0) + 1
                return Refusal(dim, short[dim])
            for d in ("requests", "input-tokens"):
                self.levels[d] -= need[d] if d == "requests" else input_cost
                self.spent[d] += need[d] if d == "requests" else input_cost
            self.first = now if self.first is None else self.first
            self.last = now
            return None

    def charge_output(self, tokens: int, now: float) -> None:
        with self.lock:
            self._refill(now)
            self.levels["output-tokens"] -= tokens
            self.spent["output-tokens"] += tokens

    def headers(self, now: float, wall: float | None = None) -> dict[str, str]:
        """``anthropic-ratelimit-*``: limit, remaining and the RFC 3339 time the bucket is
        full again, per dimension, plus ``tokens-*`` for the more depleted token bucket."""
        wall = time.time() if wall is None else wall
        with self.lock:
            self._refill(now)
            levels = dict(self.levels)
        out: dict[str, str] = {}
        for d in DIMENSIONS:
            limit = self.tier.limit(d)
            full_in = max(0.0, (limit - levels[d]) / self.rate(d))
            out[f"anthropic-ratelimit-{d}-limit"] = str(limit)
            out[f"anthropic-ratelimit-{d}-remaining"] = str(max(0, math.floor(levels[d])))
            out[f"anthropic-ratelimit-{d}-reset"] = rfc3339(wall + full_in)
        tight = min(("input-tokens", "output-tokens"),
                    key=lambda d: levels[d] / self.tier.limit(d))
        for part in ("limit", "remaining", "reset"):
            out[f"anthropic-ratelimit-tokens-{part}"] = out[f"anthropic-ratelimit-{tight}-{part}"]
        return out

    def stats(self) -> dict[str, object]:
        with self.lock:
            return {"tier": {"rpm": self.tier.rpm, "itpm": self.tier.itpm,
                             "otpm": self.tier.otpm,
                             "minute_seconds": self.tier.minute_seconds},
                    "spent": dict(self.spent), "refused": dict(self.refused),
                    "first": self.first, "last": self.last}


def rfc3339(wall: float) -> str:
    whole = math.floor(wall)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + \
        f".{int((wall - whole) * 1000):03d}Z"


def retry_after(seconds: float, tier: Tier) -> str:
    """Whole seconds like the API; milliseconds when the minute is shortened."""
    if tier.minute_seconds >= 60:
        return str(max(1, math.ceil(seconds)))
    return f"{max(0.001, seconds):.3f}"

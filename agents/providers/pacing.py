"""Pacing to the API tier: how long to wait before sending the next request. Pure; the
clock is injected.

The Claude API limits an organisation (per model class) in three dimensions, each a token
bucket that refills continuously up to its per-minute limit: requests (RPM), input tokens
(ITPM: uncached input plus cache writes; cache reads do not count) and output tokens
(OTPM). Every answer, errors included, reports the buckets in headers:
``anthropic-ratelimit-{requests,input-tokens,output-tokens}-{limit,remaining,reset}``
(``reset``: the RFC 3339 time the bucket is full again). ``anthropic-ratelimit-tokens-*``
(the most restrictive token limit) is used only when the two specific ones are absent.

The model here mirrors the server: one bucket per dimension, refilled at ``limit`` per
``minute_seconds``. Until headers arrive there is one bucket, requests, from our own
``requests_per_minute`` setting. Each header set replaces a bucket's level with the
server's ``remaining``; the server charges requests and input at arrival but output at
completion, so the output level also subtracts what our requests still in flight are
expected to produce. A request is sent only when, after its expected cost, every bucket
keeps ``reserve`` of its capacity: we slow down *before* the server answers 429, and a
steady worker runs at the refill rate (a reserve costs only part of the first burst).
Between headers the buckets follow our own spending: the expected cost is taken at send,
and the difference to the real cost (the answer's usage) is credited back at the end.
Only the first headers of a dimension are taken as they are: if they predate requests
already sent (a burst with answers faster than the sends), the reserve and one 429's
``retry-after`` absorb the difference.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

DIMENSIONS = ("requests", "input-tokens", "output-tokens")
PREFIX = "anthropic-ratelimit-"


@dataclass(frozen=True)
class Cost:
    """What one request spends (or is expected to spend) in each dimension."""

    requests: float = 1.0
    input_tokens: float = 0.0
    output_tokens: float = 0.0

    def of(self, dim: str) -> float:
        return {"requests": self.requests, "input-tokens": self.input_tokens,
                "output-tokens": self.output_tokens}[dim]


@dataclass(frozen=True)
class Bucket:
    rate: float  # units per second
    capacity: float
    level: float
    at: float

    def level_at(self, now: float) -> float:
        return min(self.capacity, self.level + max(0.0, now - self.at) * self.rate)

    def spend(self, amount: float, now: float) -> Bucket:
        return replace(self, level=self.level_at(now) - amount, at=now)


def read_headers(headers: Mapping[str, str]) -> dict[str, tuple[int, int]]:
    """``{dimension: (limit, remaining)}`` from the rate-limit headers (missing or
    unparsable ones are left out)."""
    out: dict[str, tuple[int, int]] = {}
    names = {k.lower(): v for k, v in headers.items()}
    for dim in (*DIMENSIONS, "tokens"):
        try:
            limit = int(float(names[f"{PREFIX}{dim}-limit"]))
            remaining = int(float(names[f"{PREFIX}{dim}-remaining"]))
        except (KeyError, ValueError):
            continue
        if limit > 0:
            out[dim] = (limit, max(0, remaining))
    if "tokens" in out:
        combined = out.pop("tokens")
        for dim in ("input-tokens", "output-tokens"):
            out.setdefault(dim, combined)
    return out


class Pacer:
    """The worker's view of its tier. Methods are synchronous and never sleep."""

    def __init__(self, requests_per_minute: int, *, burst: int = 1,
                 clock: Callable[[], float], minute_seconds: float = 60.0,
                 reserve: float = 0.05, learn_rate: float = 0.2) -> None:
        self.clock = clock
        self.minute = minute_seconds
        self.reserve = reserve
        self.learn_rate = learn_rate
        cap = float(max(1, min(burst, requests_per_minute)))
        self.buckets = {"requests": Bucket(requests_per_minute / minute_seconds, cap, cap,
                                           clock())}
        self.from_headers = False
        #: dimensions whose bucket comes from the server's headers
        self.synced: set[str] = set()
        self.inflight_output = 0.0
        #: learned per-request input (uncached + cache writes) and output tokens.
        self.learned: dict[str, float] = {}

    def expected(self, estimate: Cost) -> Cost:
        """The cost to plan with: what requests actually cost lately, once seen."""
        return Cost(estimate.requests,
                    self.learned.get("input-tokens", estimate.input_tokens),
                    self.learned.get("output-tokens", estimate.output_tokens))

    def delay(self, cost: Cost) -> float:
        """Seconds until ``cost`` fits in every bucket with the reserve left (0: now)."""
        now = self.clock()
        wait = 0.0
        for dim, b in self.buckets.items():
            need = cost.of(dim)
            if need <= 0:
                continue
            spare = self.reserve * b.capacity if self.from_headers else 0.0
            target = min(b.capacity, need + spare)
            level = b.level_at(now)
            if level < target:
                wait = max(wait, (target - level) / b.rate)
        return wait

    def take(self, cost: Cost) -> None:
        now = self.clock()
        self.buckets = {d: b.spend(cost.of(d), now) for d, b in self.buckets.items()}
        self.inflight_output += cost.output_tokens

    def release(self, cost: Cost, actual: Cost | None = None) -> None:
        """The request planned at ``cost`` is over. ``actual``: what it really cost (an
        answer's usage), credited back as the difference; None (no answer): it produced no
        output, and its request and input are assumed charged."""
        self.inflight_output = max(0.0, self.inflight_output - cost.output_tokens)
        now = self.clock()
        real = actual or Cost(cost.requests, cost.input_tokens, 0.0)
        for dim, b in self.buckets.items():
            if dim in self.synced and (extra := cost.of(dim) - real.of(dim)):
                self.buckets[dim] = b.spend(-extra, now)

    def learn(self, input_tokens: int, output_tokens: int) -> None:
        for dim, seen in (("input-tokens", input_tokens), ("output-tokens", output_tokens)):
            old = self.learned.get(dim)
            self.learned[dim] = float(seen) if old is None else (
                old + self.learn_rate * (seen - old))

    def observe(self, headers: Mapping[str, str]) -> bool:
        """Re-sync the buckets from one answer's headers; False when it had none. A bucket
        never becomes fuller than our own account of it: the headers may predate requests
        we sent while they travelled (the server's lower count wins: another client of the
        same organisation, or a cost we under-estimated)."""
        readings = read_headers(headers)
        if not readings:
            return False
        now = self.clock()
        for dim, (limit, remaining) in readings.items():
            level = remaining - (self.inflight_output if dim == "output-tokens" else 0.0)
            old = self.buckets.get(dim)
            if dim in self.synced and old is not None and old.capacity == limit:
                level = min(level, old.level_at(now))
            self.buckets[dim] = Bucket(limit / self.minute, float(limit), level, now)
            self.synced.add(dim)
        self.from_headers = True
        return True

    def limits(self) -> dict[str, float]:
        """Per-minute limit of each known dimension (for logs and the benchmark)."""
        return {d: round(b.rate * self.minute, 6) for d, b in self.buckets.items()}

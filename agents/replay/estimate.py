"""What a replay will cost, before it runs (``--dry-run``) and while it runs (``--budget-usd``).

Input tokens are counted by the provider where it can (Anthropic ``count_tokens``, free but
rate-limited, on the exact first request of a job): the first ``EXACT_COUNTS`` requests are
counted, and the rest are estimated from their characters at the tokens-per-character ratio
those counts measured (a calibrated estimate; a large topic needs no 50,000 count calls).
Without a counting provider: 3.5 characters per token. A
cacheable prefix (the system blocks up to a ``cache`` mark) that reaches the model's minimum
is priced as a cache write the first time and a cache read afterwards (the replay runs
within the cache lifetime). Output tokens per call: the mean of earlier results on the
results topic when there are any ("calibrated" from real answers), else
``OUTPUT_TOKENS_PER_CALL`` — a deliberately round figure sized for a judge answer (about
1,500 characters) and a debrief evaluation. Repairs and retries are not foreseen: the
estimate is for one call per job.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from typing import Any

from agents.providers.base import LLMRequest, TokenUsage
from agents.providers.factory import cost_usd
from agents.providers.settings import LLMSettings
from agents.providers.startup import prefix_key
from streams.series import Series

#: output tokens per call when no earlier result says better (documented in the README)
OUTPUT_TOKENS_PER_CALL = {"judge": 400, "debrief": 2500}
CHARS_PER_TOKEN = 3.5
#: requests counted exactly before the measured ratio takes over
EXACT_COUNTS = 200


def output_per_call(worker: str, series: Series | None) -> tuple[int, str]:
    """(tokens, where the figure comes from)."""
    if series is not None:
        out = sum(v[0] for v in series.output_tokens.values())
        calls = sum(v[1] for v in series.output_tokens.values())
        if calls:
            return max(1, round(out / calls)), f"mean of {calls} earlier call(s)"
    return OUTPUT_TOKENS_PER_CALL[worker], "default constant"


def chars(request: LLMRequest) -> int:
    return len(json.dumps([[b.text for b in request.system], request.messages, request.tools],
                          default=str))


def rough_tokens(request: LLMRequest) -> int:
    return math.ceil(chars(request) / CHARS_PER_TOKEN)


@dataclass
class Estimate:
    jobs: int = 0  # inputs to process (not yet published under this version)
    read: int = 0  # records of the range read
    filtered: int = 0  # left out by --task/--criterion/--kind
    already: int = 0  # published under this version already
    calls: int = 0  # of them, those that need a model call
    input_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    output_tokens: int = 0
    usd: float = 0.0
    counted: str = "count_tokens"
    output_source: str = ""

    @property
    def usd_per_call(self) -> float:
        return self.usd / self.calls if self.calls else 0.0


class Estimator:
    def __init__(self, provider: Any, llm: LLMSettings, out_per_call: int,
                 min_cache_tokens: int | None, *, batch: bool = False) -> None:
        self.provider, self.llm, self.batch = provider, llm, batch
        self.out = out_per_call
        self.min_cache = min_cache_tokens
        self.est = Estimate()
        self._prefixes: dict[str, int] = {}
        self._count = getattr(provider, "count_prefix_tokens", None)
        self._measured = [0, 0]  # tokens counted, characters of those requests
        self.exact_counts = EXACT_COUNTS
        if self._count is None:
            self.est.counted = "3.5 characters per token"

    async def _tokens(self, request: LLMRequest) -> int:
        if self._count is None:
            return rough_tokens(request)
        size = chars(request)
        if self._measured[0] and self.exact_counts <= 0:
            self.est.counted = "count_tokens on a sample, then its tokens-per-character ratio"
            return math.ceil(size * self._measured[0] / self._measured[1])
        self.exact_counts -= 1
        n = int(await self._count(request))
        self._measured[0] += n
        self._measured[1] += size
        return n

    async def add(self, request: LLMRequest | None) -> None:
        """One job; ``request`` is its first model request (None: decided in code)."""
        self.est.jobs += 1
        if request is None:
            return
        total = await self._tokens(request)
        write = read = 0
        if self.min_cache is not None and any(b.cache for b in request.system):
            key = prefix_key(request)
            if key not in self._prefixes:
                last = max(i for i, b in enumerate(request.system) if b.cache)
                prefix = dataclasses.replace(request, system=request.system[:last + 1],
                                             messages=())
                self._prefixes[key] = await self._tokens(prefix)
                if self._prefixes[key] >= self.min_cache:
                    write = self._prefixes[key]
            elif self._prefixes[key] >= self.min_cache:
                read = self._prefixes[key]
        usage = TokenUsage(input_tokens=max(0, total - write - read), output_tokens=self.out,
                           cache_read_input_tokens=read, cache_creation_input_tokens=write)
        e = self.est
        e.calls += 1
        e.input_tokens += usage.input_tokens
        e.cache_write_tokens += write
        e.cache_read_tokens += read
        e.output_tokens += self.out
        e.usd += cost_usd(usage, self.provider.model, self.llm, batch=self.batch)

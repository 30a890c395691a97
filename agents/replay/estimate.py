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
1,500 characters) and a debrief evaluation — capped at ``llm.max_tokens``. The dry run
says the output is an estimate, and its upper bound (max_tokens per call: the API bills
only what is generated). Repairs and retries are not foreseen: the estimate is for one
call per job, plus ``TOOL_TURNS`` turns for a job offered the chart tools (its first
request defines them), priced live (a batch answers only the first turn).
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from typing import Any

from agents.judge.chart_tools import NAMES as CHART_TOOLS
from agents.providers.base import LLMRequest, TokenUsage
from agents.providers.factory import cost_usd
from agents.providers.settings import LLMSettings
from agents.providers.startup import prefix_key
from streams.produced import Series

#: output tokens per call when no earlier result says better (documented in docs/replay.md)
OUTPUT_TOKENS_PER_CALL = {"judge": 400, "debrief": 2500}
CHARS_PER_TOKEN = 3.5
#: requests counted exactly before the measured ratio takes over
EXACT_COUNTS = 200
#: a job offered the chart tools: model turns after the first (a search, a read; then the
#: answer is the last of them), each adding a tool result of about this many tokens
#: (a read is at most 4,000 characters) to what it re-sends; the cached system prefix is
#: read from the cache on every turn. A fixed guess, documented in docs/chart-tools.md;
#: the per-cell budget (JUDGEFLOW_CHART_TOOLS__*) bounds the real figure.
TOOL_TURNS = 2
TOOL_TURN_TOKENS = 600


def output_per_call(worker: str, series: Series | None) -> tuple[int, str]:
    """(tokens, where the figure comes from)."""
    if series is not None:
        out = sum(v[0] for v in series.output_tokens.values())
        calls = sum(v[1] for v in series.output_tokens.values())
        if calls:
            return max(1, round(out / calls)), f"mean of {calls} earlier call(s)"
    return OUTPUT_TOKENS_PER_CALL[worker], f"a fixed guess sized for a typical {worker} answer"


def chars(request: LLMRequest) -> int:
    return len(json.dumps([[b.text for b in request.system], request.messages, request.tools],
                          default=str))


def rough_tokens(request: LLMRequest) -> int:
    return math.ceil(chars(request) / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Pricing:
    """What prices one job: the provider that judges it (its model; its ``count_tokens``),
    that route's LLM settings (catalogue, cache TTL) and its model's minimum cacheable
    prefix (None: no caching)."""

    provider: Any
    llm: LLMSettings
    min_cache_tokens: int | None


@dataclass
class ModelCost:
    """One model's share of an estimate (a replay with ``llm.criterion_models`` has one per
    model)."""

    calls: int = 0
    input_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0
    output_tokens: int = 0
    usd: float = 0.0


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
    #: llm.max_tokens: what one call's output can reach at most (the dry run says so)
    max_tokens: int = 0
    #: of ``calls``: the chart-tool turns foreseen (live calls, also under --batch)
    tool_turns: int = 0
    #: the same figures per model, in the order the models were first priced
    by_model: dict[str, ModelCost] = dataclasses.field(default_factory=dict)

    @property
    def usd_per_call(self) -> float:
        return self.usd / self.calls if self.calls else 0.0


class _Counter:
    """Input tokens of one provider's requests: ``count_tokens`` on the first
    ``EXACT_COUNTS``, then the tokens-per-character ratio they measured (no counter: 3.5
    characters per token)."""

    def __init__(self, provider: Any, exact_counts: int) -> None:
        self.count = getattr(provider, "count_prefix_tokens", None)
        self.measured = [0, 0]  # tokens counted, characters of those requests
        self.exact_counts = exact_counts
        self.sampled = False

    async def tokens(self, request: LLMRequest) -> int:
        if self.count is None:
            return rough_tokens(request)
        size = chars(request)
        if self.measured[0] and self.exact_counts <= 0:
            self.sampled = True
            return math.ceil(size * self.measured[0] / self.measured[1])
        self.exact_counts -= 1
        n = int(await self.count(request))
        self.measured[0] += n
        self.measured[1] += size
        return n


class Estimator:
    def __init__(self, provider: Any, llm: LLMSettings, out_per_call: int,
                 min_cache_tokens: int | None, *, batch: bool = False) -> None:
        self.default = Pricing(provider, llm, min_cache_tokens)
        self.batch = batch
        # a call never outputs more than max_tokens (a mean of long earlier answers under
        # another max_tokens could say more)
        self.out = min(out_per_call, llm.max_tokens)
        self.est = Estimate(max_tokens=llm.max_tokens)
        self._prefixes: dict[tuple[str, str], int] = {}
        self._counters: dict[int, _Counter] = {}
        self.exact_counts = EXACT_COUNTS
        if getattr(provider, "count_prefix_tokens", None) is None:
            self.est.counted = "3.5 characters per token"

    def _counter(self, provider: Any) -> _Counter:
        c = self._counters.get(id(provider))
        if c is None:
            c = self._counters[id(provider)] = _Counter(provider, self.exact_counts)
        return c

    async def add(self, request: LLMRequest | None, pricing: Pricing | None = None) -> None:
        """One job; ``request`` is its first model request (None: decided in code), priced
        at ``pricing``'s model (None: the default one)."""
        self.est.jobs += 1
        if request is None:
            return
        p = pricing or self.default
        model = p.provider.model
        counter = self._counter(p.provider)
        total = await counter.tokens(request)
        write = read = 0
        if p.min_cache_tokens is not None and any(b.cache for b in request.system):
            key = (model, prefix_key(request))  # each model caches its own prefix
            if key not in self._prefixes:
                last = max(i for i, b in enumerate(request.system) if b.cache)
                prefix = dataclasses.replace(request, system=request.system[:last + 1],
                                             messages=())
                self._prefixes[key] = await counter.tokens(prefix)
                if self._prefixes[key] >= p.min_cache_tokens:
                    write = self._prefixes[key]
            elif self._prefixes[key] >= p.min_cache_tokens:
                read = self._prefixes[key]
        if counter.sampled:
            self.est.counted = "count_tokens on a sample, then its tokens-per-character ratio"
        usage = TokenUsage(input_tokens=max(0, total - write - read), output_tokens=self.out,
                           cache_read_input_tokens=read, cache_creation_input_tokens=write)
        self._price(model, p, usage, self.batch)
        # the chart tools' turns (not an answer tool's): live calls, each re-sending the
        # conversation
        if any(t.get("name") in CHART_TOOLS for t in request.tools):
            cached = read + write
            for k in range(1, TOOL_TURNS + 1):
                grown = usage.input_tokens + k * (TOOL_TURN_TOKENS + self.out)
                self._price(model, p, TokenUsage(
                    input_tokens=grown, output_tokens=self.out,
                    cache_read_input_tokens=cached), False)
                self.est.tool_turns += 1

    def _price(self, model: str, p: Pricing, usage: TokenUsage, batch: bool) -> None:
        usd = cost_usd(usage, model, p.llm, batch=batch)
        for e in (self.est, self.est.by_model.setdefault(model, ModelCost())):
            e.calls += 1
            e.input_tokens += usage.input_tokens
            e.cache_write_tokens += usage.cache_creation_input_tokens
            e.cache_read_tokens += usage.cache_read_input_tokens
            e.output_tokens += usage.output_tokens
            e.usd += usd

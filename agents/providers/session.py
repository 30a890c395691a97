"""One LLM session per input: the calls made for one judge job or one debrief request.

:meth:`LLMSession.complete` calls the provider and records, for judge and debrief alike, the
``judgeflow_llm_*`` metrics (calls by status, latency, tokens by type, cost in USD: names and
labels are the Grafana dashboard's contract) and accumulates the tokens, calls and cost that
the output record carries in its ``usage`` (:meth:`LLMSession.usage_record`). A call answered
through the Message Batches API (``LLMResponse.batch``) is priced with the batch discount.

:func:`track_paid` lets a caller that runs one input per task (the replay) learn what every
answered call of that input cost, also when the input ends in a dead letter and no output
carries a ``usage``: the session adds each price to the task's :class:`Paid`.
"""

from __future__ import annotations

import contextvars
import dataclasses

from agents.errors import LLMError
from agents.providers.base import LLMRequest, LLMResponse, Provider, TokenUsage
from agents.providers.factory import cost_usd
from agents.providers.journal import Recall
from agents.providers.settings import LLMSettings
from schemas.chart_review import Usage
from streams.breaker import note_answered
from streams.metrics import Metrics


@dataclasses.dataclass
class Paid:
    """What the answered calls of the current task's input cost."""

    usd: float = 0.0
    calls: int = 0


_PAID: contextvars.ContextVar[Paid | None] = contextvars.ContextVar("llm_paid", default=None)


def track_paid() -> Paid:
    """Start counting the paid calls of the input handled by the current task (each record
    runs in its own task, so concurrent inputs never mix)."""
    paid = Paid()
    _PAID.set(paid)
    return paid


class LLMSession:
    def __init__(self, provider: Provider, llm: LLMSettings, metrics: Metrics | None,
                 worker: str, model: str | None = None, recall: Recall | None = None) -> None:
        self.provider, self.llm, self.metrics, self.worker = provider, llm, metrics, worker
        #: the input's journaled answers (agents.providers.journal): never paid twice
        self.recall = recall
        self._index = 0  # calls asked for so far (the journal's call index)
        #: calls answered from the journal (paid before: a kill, a failed repair, an outage)
        self.reused = 0
        #: the model that answered last (the configured one until a call answers)
        self.model = model if model is not None else provider.model
        self.usage = TokenUsage()
        #: HTTP attempts, failed calls included
        self.calls = 0
        self._cost = 0.0

    async def complete(self, request: LLMRequest) -> LLMResponse:
        m, name = self.metrics, self.provider.name
        index, self._index = self._index, self._index + 1
        if self.recall is not None:
            kept = await self.recall.reuse(index, request)
            if kept is not None:  # paid already: its tokens count in this output's usage
                self.reused += 1
                self.calls += kept.attempts
                self.usage += kept.usage
                self.model = kept.model or self.model
                if m is not None:
                    m.llm_calls.labels(self.worker, name, "reused").inc()
                return kept
        try:
            resp = await self.provider.complete(request)
        except LLMError as exc:
            self.calls += 1
            if m is not None:
                m.llm_calls.labels(self.worker, name, exc.kind).inc()
            raise
        note_answered()  # the provider is up: the worker's circuit breaker closes
        if self.recall is not None:  # kept (acknowledged) before anything uses it
            await self.recall.keep(index, request, resp)
        self.calls += resp.attempts
        self.usage += resp.usage
        self.model = resp.model or self.model
        u = resp.usage
        cost = cost_usd(u, resp.model or self.model, self.llm, batch=resp.batch)
        self._cost += cost
        paid = _PAID.get()
        if paid is not None:
            paid.calls += resp.attempts
            paid.usd += cost
        if m is not None:
            m.llm_calls.labels(self.worker, name, "ok").inc()
            m.llm_latency.labels(self.worker, name).observe(resp.latency_ms / 1000)
            for kind, n in (("input", u.input_tokens), ("output", u.output_tokens),
                            ("cache_read", u.cache_read_input_tokens),
                            ("cache_write", u.cache_creation_input_tokens)):
                if n:
                    m.llm_tokens.labels(self.worker, name, kind).inc(n)
            if cost:
                m.llm_cost.labels(self.worker, name).inc(cost)
        return resp

    @property
    def cost(self) -> float:
        """USD for every call so far, each priced on its own usage (a price tier depends on
        one request's prompt length, so summed usage cannot be priced): live calls at list
        price, batched ones discounted."""
        return round(self._cost, 8)

    def usage_record(self) -> Usage:
        """The ``usage`` an output record carries: tokens, cost and calls of this session."""
        u = self.usage
        return Usage(input_tokens=u.input_tokens, output_tokens=u.output_tokens,
                     cache_read_input_tokens=u.cache_read_input_tokens,
                     cache_creation_input_tokens=u.cache_creation_input_tokens,
                     cost_usd=self.cost, llm_calls=self.calls)

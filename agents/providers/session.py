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
import logging

from agents.errors import LLMError
from agents.providers.base import LLMRequest, LLMResponse, Provider, TokenUsage
from agents.providers.factory import cost_usd
from agents.providers.journal import Recall
from agents.providers.settings import LLMSettings
from schemas.chart_review import Usage
from streams import tracing
from streams.breaker import note_answered
from streams.metrics import Metrics

log = logging.getLogger(__name__)
#: failures after which the request may have been answered (and billed) unseen: the
#: journal keeps its "sent" mark, and sending it again counts as possibly paid twice
MAYBE_ANSWERED = frozenset({"timeout", "connection"})
RESENT = "sent again, possibly paid twice"
#: ``gen_ai.provider.name`` (GenAI semantic conventions) of judgeflow's provider names
GENAI_PROVIDERS = {"anthropic": "anthropic", "bedrock": "aws.bedrock",
                   "vertex": "gcp.vertex_ai"}


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
        #: answered calls (journaled ones reused included): the ``llm_calls`` of the output.
        #: A rejected attempt (429, 529, 5xx: not billed) or a failed call is not one; the
        #: ``judgeflow_llm_calls_total`` metric counts those by status.
        self.calls = 0
        self._cost = 0.0

    async def complete(self, request: LLMRequest) -> LLMResponse:
        """One call, traced (streams.tracing): the GenAI attributes, tokens, cost, latency,
        status and the step's ids; never the request's or the answer's content."""
        name = self.provider.name
        attrs = {"gen_ai.operation.name": "chat",
                 "gen_ai.provider.name": GENAI_PROVIDERS.get(name, name),
                 "gen_ai.request.model": self.model,
                 "gen_ai.request.max_tokens": request.max_tokens,
                 "judgeflow.worker": self.worker, **tracing.step_ids()}
        with tracing.span(f"chat {self.model}", attrs, kind="client") as span:
            before, reused = self._cost, self.reused
            try:
                resp = await self._complete(request)
            except LLMError as exc:
                tracing.fail(span, exc.kind)
                if span is not None:
                    span.set_attribute("judgeflow.status", exc.kind)
                raise
            if span is not None:
                u = resp.usage
                span.set_attributes({
                    "gen_ai.response.model": resp.model or self.model,
                    "gen_ai.usage.input_tokens": u.input_tokens,
                    "gen_ai.usage.output_tokens": u.output_tokens,
                    "gen_ai.usage.cache_read.input_tokens": u.cache_read_input_tokens,
                    "gen_ai.usage.cache_creation.input_tokens":
                        u.cache_creation_input_tokens,
                    "judgeflow.cost_usd": round(self._cost - before, 8),
                    "judgeflow.latency_ms": resp.latency_ms,
                    "judgeflow.batch": bool(resp.batch),
                    "judgeflow.status": "reused" if self.reused > reused else "ok"})
            return resp

    async def _complete(self, request: LLMRequest) -> LLMResponse:
        m, name = self.metrics, self.provider.name
        index, self._index = self._index, self._index + 1
        if self.recall is not None:
            kept = await self.recall.reuse(index, request)
            if kept is not None:  # paid already: its tokens count in this output's usage
                self.reused += 1
                self.calls += 1
                self.usage += kept.usage
                self.model = kept.model or self.model
                if m is not None:
                    m.llm_calls.labels(self.worker, name, "reused").inc()
                return kept
        if self.recall is not None:
            if await self.recall.lost(index, request):
                # no idempotency key in the API: the lost answer cannot be claimed back
                log.info("llm journal %s: call %d was in flight when its answer was lost (a "
                         "worker killed, a timeout); %s", self.worker, index + 1, RESENT)
                if m is not None:
                    m.llm_resent.labels(self.worker, name).inc()
            await self.recall.sending(index, request)  # a kill from here on: seen, counted
        try:
            resp = await self.provider.complete(request)
        except LLMError as exc:
            if self.recall is not None and exc.kind not in MAYBE_ANSWERED:
                await self.recall.refused(index)
            if m is not None:
                m.llm_calls.labels(self.worker, name, exc.kind).inc()
            raise
        note_answered()  # the provider is up: the worker's circuit breaker closes
        if self.recall is not None:  # kept (acknowledged) before anything uses it
            await self.recall.keep(index, request, resp)
        self.calls += 1
        self.usage += resp.usage
        self.model = resp.model or self.model
        u = resp.usage
        cost = cost_usd(u, resp.model or self.model, self.llm, batch=resp.batch)
        self._cost += cost
        paid = _PAID.get()
        if paid is not None:
            paid.calls += 1
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

"""Run a replay: the live worker's own handler under a replay consumer group (see
:mod:`agents.replay.plan`), with the range, the filters, the skip of what this version
already published, a USD budget and a progress callback around it. No second judge loop:
every job that is processed goes through exactly the code the worker runs.

Resumable: offsets commit only after results are acknowledged, and the result ledger
(result ids on the results topic) skips jobs whose result exists, so a run killed at any
point and started again pays for no job twice. ``--budget-usd``: before a job's model call
its estimated cost is reserved; when spent + reserved + this estimate would pass the budget
the job is deferred (left uncommitted) and the run stops cleanly, committing what is done.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiokafka import TopicPartition

from agents.providers.base import LLMRequest
from agents.providers.session import track_paid
from agents.providers.settings import worker_options
from agents.replay.estimate import Estimator, Pricing
from agents.replay.plan import Plan
from agents.settings import Settings
from streams.errors import BadRecord, Unavailable
from streams.metrics import Metrics
from streams.runner import ConcurrentWorker, Deferred, Handler, Output

log = logging.getLogger(__name__)


@dataclass
class Target:
    """What a replay needs of a worker (judge or debrief)."""

    worker: str
    version: str
    input_topic: str
    output_topic: str
    handler: Handler
    decode: Callable[[bytes | None], Any]  # raises BadRecord
    result_id: Callable[[Any], str]
    published: Callable[[str], bool]  # this result id is already on the output topic
    first_request: Callable[[Any], LLMRequest | None]
    keep: Callable[[Any], bool] = lambda item: True
    #: the provider, settings and cache minimum that price an item (None: the default model)
    pricing: Callable[[Any], Pricing] | None = None

    def price_of(self, item: Any) -> Pricing | None:
        return None if self.pricing is None else self.pricing(item)


@dataclass
class Tally:
    total: int = 0
    seen: int = 0
    judged: int = 0  # results published by this run
    already: int = 0
    filtered: int = 0
    malformed: int = 0
    failed: int = 0  # dead-lettered (e.g. llm_unavailable: re-drive with replay dlq)
    deferred: int = 0  # left for a later round (--batch: no batch answer yet)
    usd: float = 0.0
    stopped_by: str = ""
    #: when the budget stopped the run: what was reserved for how many jobs in flight
    reserved_usd: float = 0.0
    in_flight: int = 0
    started: float = field(default_factory=time.monotonic)

    def eta_seconds(self) -> float | None:
        if not self.seen or self.seen >= self.total:
            return None
        return (time.monotonic() - self.started) / self.seen * (self.total - self.seen)


def _cost(outputs: Sequence[Output], topic: str) -> float:
    total = 0.0
    for o in outputs:
        if o.topic == topic:
            usage = orjson.loads(o.value or b"{}").get("usage") or {}
            total += float(usage.get("cost_usd") or 0.0)
    return total


class Replay:
    def __init__(self, settings: Settings, target: Target, plan: Plan, *, metrics: Metrics,
                 budget_usd: float | None = None, estimator: Estimator | None = None,
                 progress: Callable[[Tally], None] | None = None,
                 gate: Callable[[Any], bool] | None = None) -> None:
        self.s, self.t, self.plan = settings, target, plan
        #: False: not this round (the record stays uncommitted); see agents.replay.batch
        self.gate = gate
        self.budget, self.estimator, self.progress = budget_usd, estimator, progress
        self.tally = Tally(total=plan.total)
        self._reserved, self._flying = 0.0, 0  # estimated USD and count of calls in flight
        self.worker = ConcurrentWorker(
            settings, name=f"replay-{target.worker}", topic=target.input_topic,
            group_id=plan.group, handler=self._handle,
            concurrency=settings.llm.concurrency, metrics=metrics,
            **worker_options(settings.llm),
            on_unavailable_letter=self._gave_up)

    def _gave_up(self, rec: Any) -> None:
        """The runner dead-lettered a record that kept failing while the model answered."""
        self.tally.failed += 1
        self._done()

    async def run(self) -> Tally:
        if self.tally.total:
            await self.worker.run()
        return self.tally

    def _done(self) -> None:
        self.tally.seen += 1
        if self.progress is not None:
            self.progress(self.tally)
        if self.tally.seen >= self.tally.total:
            self.worker.stop()

    async def _handle(self, rec: Any) -> Sequence[Output]:
        if rec.offset >= self.plan.ends.get(TopicPartition(rec.topic, rec.partition), 0):
            raise Deferred  # arrived after the replay started: the live worker's
        t = self.tally
        try:
            item = self.t.decode(rec.value)
        except BadRecord:
            t.malformed += 1  # dead-lettered by the live worker already
            self._done()
            return []
        if not self.t.keep(item):
            t.filtered += 1
        elif self.t.published(self.t.result_id(item)):
            t.already += 1
        elif self.gate is not None and not self.gate(item):
            t.deferred += 1
            self._done()
            raise Deferred
        else:
            return await self._process(rec, item)
        self._done()
        return []

    async def _process(self, rec: Any, item: Any) -> Sequence[Output]:
        t, reserve = self.tally, 0.0
        if self.budget is not None and self.estimator is not None:
            before = self.estimator.est.usd
            await self.estimator.add(self.t.first_request(item), self.t.price_of(item))
            reserve = self.estimator.est.usd - before
            if t.usd + self._reserved + reserve > self.budget:
                if not t.stopped_by:
                    t.reserved_usd, t.in_flight = self._reserved, self._flying
                    log.warning("replay: budget of %.4f USD reached (spent %.4f, %.4f "
                                "reserved for %d call(s) in flight); stopping",
                                self.budget, t.usd, self._reserved, self._flying)
                t.stopped_by = "budget"
                self.worker.stop()
                raise Deferred
        self._reserved += reserve
        self._flying += 1
        paid = track_paid()  # every paid call counts, also when the record dead-letters
        try:
            outputs = await self.t.handler(rec)
        except BaseException as exc:
            t.usd += paid.usd
            # Unavailable: the runner's breaker tries the record again (or calls _gave_up)
            if isinstance(exc, BadRecord) and not isinstance(exc, Unavailable):
                t.failed += 1
                self._done()
            raise
        finally:
            self._reserved -= reserve
            self._flying -= 1
        # a handler whose calls were not metered (a test double): the results' own figure
        t.usd += paid.usd if paid.calls else _cost(outputs, self.t.output_topic)
        t.judged += sum(1 for o in outputs if o.topic == self.t.output_topic)
        self._done()
        return outputs

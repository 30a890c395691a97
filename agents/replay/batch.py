"""``replay judge --batch``: the first call of every job through the Message Batches API.

A round: read the range still to do (from the replay group's committed offsets), submit
one batch of the first requests of the jobs that have no batch answer yet
(``custom_id`` = the job's result id under this version), record the batch id on
``judgeflow.replay-batches.v1`` *before* polling, poll with backoff until it ended, then
run the usual replay pass (the worker's handler) in which a job's first call is answered
from the batch. The answer therefore goes through exactly the live validation path (a
repair round-trip, if needed, is a live call). Jobs whose entry ``errored`` or ``expired``
are deferred (left uncommitted) and re-queued into the next round's batch.

After a kill: the next run first collects every batch recorded for its group (waiting for
the ones still in progress), so submitted jobs are not paid for again.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Callable
from typing import Any

from agents.errors import LLMError
from agents.providers.base import LLMRequest, LLMResponse
from agents.replay.batch_log import record, recorded
from agents.replay.driver import Replay, Tally, Target
from agents.replay.plan import Plan, read_range
from agents.settings import Settings
from streams.errors import BadRecord
from streams.metrics import Metrics

log = logging.getLogger(__name__)
MAX_ROUNDS = 4
_CURRENT: contextvars.ContextVar[str | None] = contextvars.ContextVar("batch_job", default=None)


class PresetProvider:
    """The live provider, except that a job's first call returns its batch answer."""

    def __init__(self, live: Any, presets: dict[str, LLMResponse] | None = None) -> None:
        self.live, self.name, self.model = live, live.name, live.model
        #: batch answers by custom id; shared by the per-criterion routes' providers
        self.presets: dict[str, LLMResponse] = {} if presets is None else presets

    async def complete(self, request: LLMRequest) -> LLMResponse:
        cid = _CURRENT.get()
        if cid is not None and cid in self.presets:
            _CURRENT.set(None)  # a repair is a live call
            return self.presets.pop(cid)
        result: LLMResponse = await self.live.complete(request)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.live, name)


async def _collect(live: Any, batch_id: str, presets: dict[str, LLMResponse],
                   first_poll: float) -> None:
    """Wait for the batch to end and keep its answers. Past the 29-day results window its
    results are gone: nothing is kept, so its jobs go into the next round's batch."""
    delay = first_poll
    while not (state := await live.batch_status(batch_id)).ended:
        await asyncio.sleep(delay)
        delay = min(60.0, delay * 2)
    gone = "past the 29-day results window"
    if getattr(state, "results_gone", lambda: False)():
        log.warning("batch %s is %s; its jobs are re-run", batch_id, gone)
        return
    try:
        entries = await live.batch_results(batch_id)
    except LLMError as exc:
        if exc.kind != "not_found":
            raise
        log.warning("batch %s: results not found (%s); its jobs are re-run", batch_id, gone)
        return
    failed = 0
    for r in entries:
        if r.response is not None:
            presets[r.custom_id] = r.response
        else:
            failed += 1
    if failed:
        log.warning("batch %s: %d request(s) errored or expired; re-queued", batch_id, failed)


def _submitter(target: Target, item: Any, default: Any) -> Any:
    """The live provider whose model and effort judge ``item`` (its criterion's route)."""
    pricing = target.price_of(item)
    provider = default if pricing is None else pricing.provider
    return getattr(provider, "live", provider)


async def _pending(settings: Settings, target: Target, p: Plan,
                   presets: dict[str, LLMResponse], default: Any
                   ) -> list[tuple[Any, str, LLMRequest]]:
    """First requests of the range's jobs that need a call and have no batch answer yet,
    each with the live provider that builds its params (model, effort)."""
    todo: list[tuple[Any, str, LLMRequest]] = []

    async def one(rec: Any) -> None:
        try:
            item = target.decode(rec.value)
        except BadRecord:
            return
        cid = target.result_id(item)
        if target.keep(item) and not target.published(cid) and cid not in presets:
            request = target.first_request(item)
            if request is not None:
                todo.append((_submitter(target, item, default), cid, request))

    await read_range(settings, p, one)
    return todo


async def run_batch(settings: Settings, target: Target, preset: PresetProvider,
                    replan: Callable[[], Any], *, metrics: Metrics, first_poll: float = 5.0,
                    progress: Callable[[Tally], None] | None = None) -> Tally:
    live, total = preset.live, Tally()
    p: Plan = await replan()
    for old in await recorded(settings, p.group, target.input_topic):
        log.info("collecting batch %s submitted by an earlier run", old.batch_id)
        await _collect(live, old.batch_id, preset.presets, first_poll)
    for _ in range(MAX_ROUNDS):
        todo = await _pending(settings, target, p, preset.presets, live)
        submitted: list[str] = []
        for provider, items in _by_provider(todo):  # every request carries its own model
            for batch_id, ids in await provider.submit_batch(items):  # 100,000 / 256 MB
                await record(settings, p.group, target.input_topic, target.version,
                             batch_id, ids)
                log.info("batch %s: %d request(s) for %s submitted", batch_id, len(ids),
                         provider.model)
                submitted.append(batch_id)
        for batch_id in submitted:
            await _collect(live, batch_id, preset.presets, first_poll)

        def gate(item: Any) -> bool:
            cid = target.result_id(item)
            _CURRENT.set(cid)
            return cid in preset.presets or target.first_request(item) is None

        tally = await Replay(settings, target, p, metrics=metrics, gate=gate,
                             progress=progress).run()
        for name in ("judged", "failed", "usd"):
            setattr(total, name, getattr(total, name) + getattr(tally, name))
        for name in ("already", "filtered", "malformed"):  # seen again every round
            setattr(total, name, max(getattr(total, name), getattr(tally, name)))
        total.total, total.deferred = max(total.total, tally.total), tally.deferred
        if not tally.deferred:
            break
        p = await replan()
    if total.deferred:
        total.stopped_by = "unanswered"  # never "0 new results" as if nothing was to do
        log.warning("replay --batch: %d job(s) still without a batch answer after %d "
                    "round(s); run again to re-submit them", total.deferred, MAX_ROUNDS)
    return total


def _by_provider(todo: list[tuple[Any, str, LLMRequest]]
                 ) -> list[tuple[Any, list[tuple[str, LLMRequest]]]]:
    """Pending requests grouped by the provider that builds their params, in first-seen
    order (the default model first when it has jobs)."""
    groups: dict[int, tuple[Any, list[tuple[str, LLMRequest]]]] = {}
    for provider, cid, request in todo:
        groups.setdefault(id(provider), (provider, []))[1].append((cid, request))
    return list(groups.values())

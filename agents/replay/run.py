"""``judgeflow replay judge|debrief``: plan, estimate (``--dry-run``) or run a replay.

Start-up is the worker's: the provider is built and checked (unknown or retired model:
exit 2), the topics exist, the results topic is scanned (ids of this version are skipped;
earlier versions' results are named in ``supersedes``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from agents.errors import AgentsError
from agents.providers.factory import is_offline, make_provider, release, require_credentials
from agents.providers.startup import check_provider
from agents.replay.batch import PresetProvider, run_batch
from agents.replay.driver import Replay, Tally, Target
from agents.replay.estimate import Estimate, Estimator, output_per_call
from agents.replay.plan import Plan, group_name, plan, read_range
from agents.replay.targets import (
    Filters,
    check_filter,
    debrief_target,
    judge_target,
    min_cache,
)
from agents.settings import Settings
from streams.errors import BadRecord
from streams.journal import Journal, open_journal
from streams.kafka_acls import role_acls
from streams.metrics import Metrics
from streams.topics import ensure_topics

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Options:
    worker: str  # "judge" | "debrief"
    filters: Filters = field(default_factory=Filters)
    since: datetime | None = None
    from_offsets: dict[int, int] | None = None
    dry_run: bool = False
    budget_usd: float | None = None
    #: first calls through the Message Batches API (judge only); first poll interval (s)
    batch: bool = False
    poll_seconds: float = 5.0


@dataclass
class Outcome:
    version: str
    plan: Plan
    estimate: Estimate | None = None
    tally: Tally | None = None
    provider: str = ""
    model: str = ""
    batch: bool = False


async def _target(settings: Settings, provider: Any, metrics: Metrics, journal: Journal | None,
                  opts: Options, stack: contextlib.AsyncExitStack) -> tuple[Target, Any]:
    if opts.worker == "judge":
        return await judge_target(settings, provider, metrics, opts.filters, journal,
                                  stack=stack)
    return await debrief_target(settings, provider, metrics, journal)


async def estimate(settings: Settings, target: Target, p: Plan, estimator: Estimator,
                   counting: Callable[[Estimate, int], None] | None = None) -> Estimate:
    """Every job of the range this version has not published yet, counted and priced."""
    est = estimator.est

    async def one(rec: Any) -> None:
        est.read += 1
        try:
            item = target.decode(rec.value)
        except BadRecord:
            return
        if not target.keep(item):
            est.filtered += 1
        elif target.published(target.result_id(item)):
            est.already += 1
        else:
            await estimator.add(target.first_request(item), target.price_of(item))
        if counting is not None:
            counting(est, p.total)

    await read_range(settings, p, one)
    return est


async def _check_task(settings: Settings, target: Target, p: Plan, task: str) -> None:
    """``--task`` naming no task of the range is a one-line error listing the ones there."""
    seen: set[str] = set()

    async def one(rec: Any) -> None:
        with contextlib.suppress(BadRecord):
            seen.add(target.decode(rec.value).task_id)

    await read_range(settings, p, one)
    if seen:
        check_filter("--task", task, seen)


async def replay(settings: Settings, opts: Options, *, provider: Any = None,
                 progress: Callable[[Tally], None] | None = None,
                 counting: Callable[[Estimate, int], None] | None = None) -> Outcome:
    metrics = Metrics.create()
    if opts.batch and opts.budget_usd is not None:
        raise AgentsError("--batch and --budget-usd: use --dry-run to see the cost first")
    provider = provider or make_provider(settings)
    stack = contextlib.AsyncExitStack()
    try:
        if opts.batch and is_offline(provider):
            raise AgentsError("--batch needs the anthropic provider (llm.provider)")
        if opts.batch and getattr(provider, "supports_batches", True) is False:
            log.warning("%s has no Message Batches API: --batch runs live calls instead (at "
                        "live prices)", provider.name)
            opts = dataclasses.replace(opts, batch=False)
        require_credentials(provider)
        await check_provider(provider, settings.llm, metrics)
        facts = getattr(provider, "facts", None)
        if opts.batch and facts is not None and not facts.batch:
            raise AgentsError(f"--batch: the Models API says {provider.model} does not "
                              "support the Message Batches API; replay without --batch")
        await ensure_replay_topics(settings, opts)
        preset = PresetProvider(provider) if opts.batch and not opts.dry_run else None
        # paid answers kept until published: a killed replay re-pays nothing (live runs only)
        live = not (opts.dry_run or opts.batch or is_offline(provider))
        journal = await stack.enter_async_context(open_journal(
            settings.kafka, settings.topics.llm_journal)) if live else None
        target, series = await _target(settings, preset or provider, metrics, journal, opts,
                                       stack)
        group = group_name(opts.worker, target.version, opts.filters.as_dict())

        async def replan() -> Plan:
            return await plan(settings, target.input_topic, group, since=opts.since,
                              from_offsets=opts.from_offsets, commit=not opts.dry_run)

        p = await replan()
        if opts.filters.task is not None:
            await _check_task(settings, target, p, opts.filters.task)
        if p.resumed and (opts.since or opts.from_offsets):
            log.warning("replay group %s has committed offsets: resuming there; --since/"
                        "--from-offsets apply to a first run only", group)
        out, source = output_per_call(opts.worker, series)

        def estimator() -> Estimator:
            return Estimator(provider, settings.llm, out, min_cache(settings, provider),
                             batch=opts.batch)

        outcome = Outcome(target.version, p, provider=provider.name, model=provider.model,
                          batch=opts.batch)
        if opts.dry_run:
            outcome.estimate = await estimate(settings, target, p, estimator(), counting)
            outcome.estimate.output_source = source
            return outcome
        if preset is not None:
            outcome.tally = await run_batch(settings, target, preset, replan, metrics=metrics,
                                            first_poll=opts.poll_seconds, progress=progress)
            return outcome
        run = Replay(settings, target, p, metrics=metrics, budget_usd=opts.budget_usd,
                     estimator=estimator() if opts.budget_usd is not None else None,
                     progress=progress)
        outcome.tally = await run.run()
        return outcome
    finally:
        await stack.aclose()
        await release(provider)


async def ensure_replay_topics(settings: Settings, opts: Options) -> None:
    """The topics of the replay's own role (``replay-judge``/``replay-debrief``) after the
    check of its ACLs: a dry run writes nothing, so it needs none of the Write ACLs."""
    role = f"replay-{opts.worker}"
    needed = [a for a in role_acls(role, settings)
              if not (opts.dry_run and a.operation == "Write")]
    await ensure_topics(settings, role=role, acls=needed)


def progress_line(t: Tally) -> None:
    eta = t.eta_seconds()
    left = "-" if eta is None else f"{int(eta // 60)}m{int(eta % 60):02d}s"
    sys.stderr.write(f"\rreplay: {t.seen}/{t.total} done, {t.judged} new result(s), "
                     f"${t.usd:.4f} so far, ETA {left}   ")
    sys.stderr.flush()

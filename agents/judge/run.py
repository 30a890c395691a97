"""``judgeflow worker judge``: every job on the jobs topic -> exactly one JudgeResult.

Start-up: make sure the topics exist (the client factory checks the connection first), load the
phenotype skill (fail fast if broken), rebuild the result ledger from the results topic
(see :mod:`streams.produced`), then consume jobs with :class:`ConcurrentWorker`
(``llm.concurrency`` jobs at once; offsets committed only after results are acknowledged).
A record that is not a valid JudgeJob goes to the jobs DLQ; everything else yields a result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence, Set
from typing import Any

import orjson

from agents.context.charts import ChartStore
from agents.errors import AgentsError
from agents.judge.gates import GateAnswers
from agents.judge.gates_feed import following
from agents.judge.judge import Judge
from agents.judge.routes import build_routes, check_overrides, check_routes
from agents.providers import factory
from agents.providers.base import Provider
from agents.providers.factory import is_offline, make_provider, model_entry, require_credentials
from agents.providers.journal import tombstone
from agents.providers.settings import worker_options
from agents.providers.startup import check_provider
from agents.settings import Settings
from schemas.chart_review import JudgeJob, JudgeResult
from schemas.skill import Skill, load_skill
from streams import limits, tracing, worker_main
from streams.decode import decode_record
from streams.errors import BadRecord
from streams.journal import open_journal
from streams.metrics import Metrics
from streams.produced import ProducedIds, result_headers
from streams.runner import ConcurrentWorker, Output
from streams.topics import ensure_topics
from streams.worker_main import serve_until

log = logging.getLogger(__name__)


def decode_job(value: bytes | None) -> JudgeJob:
    return decode_record(JudgeJob, value)


def admit(job: JudgeJob, skill: Skill, tasks: Set[str]) -> None:
    """Refuse, before anything is paid, a job no result could be right for: a task that is
    not judged here (``tasks``, the ``tasks`` setting; empty: any) or a field that is not a
    usable criterion of the skill (a fallback result would look like a judged cell)."""
    if tasks and job.task_id not in tasks:
        raise BadRecord("unknown_task", "task_id is not one of the tasks judged here "
                        "(the tasks setting)")
    if skill.criterion(job.field_id) is None:
        raise BadRecord("unknown_criterion", skill.unavailable_reason(job.field_id))


def accept_job(value: bytes | None, skill: Skill, tasks: Set[str]) -> JudgeJob:
    """The one check before a job is paid for, wherever it is read (the worker, ``replay
    judge`` and the first calls ``replay judge --batch`` submits): the contract, the
    free-text limits, then :func:`admit`. :class:`BadRecord` gives the dead-letter type."""
    job = decode_job(value)
    if problems := limits.job_problems(job):
        raise BadRecord("oversized", "; ".join(problems))
    admit(job, skill, tasks)
    return job


def encode_result(result: JudgeResult) -> bytes:
    return orjson.dumps(result.model_dump(mode="json"))


def make_handler(judge: Judge, ledger: ProducedIds, results_topic: str) -> Any:
    async def handle(rec: Any) -> Sequence[Output]:
        job = accept_job(rec.value, judge.skill, frozenset(judge.settings.tasks))
        tracing.annotate(job_id=job.job_id, result_id=judge.result_id(job))
        async with ledger.claim(judge.result_id(job)) as fresh:
            if not fresh:
                log.info("job %s already judged under %s; skipped", job.job_id[:12],
                         judge.version_for(job))
                return tombstone(judge.journal, judge.journal_key(job))
            result = await judge.judge(job)
            old = ledger.series.supersedes(job.job_id, result.prompt_version)
            if old is not None:
                result = result.model_copy(update={"supersedes": old})
            headers = result_headers(result.result_id, result.prompt_version, "job_id",
                                     job.job_id, old)
            return [Output(results_topic, job.key.encode(), encode_result(result), headers),
                    *tombstone(judge.journal, judge.journal_key(job))]
    return handle


async def serve(settings: Settings, provider: Provider | None = None,
                stop: asyncio.Event | None = None, metrics: Metrics | None = None) -> None:
    """Run the judge worker until ``stop`` is set (on SIGTERM/SIGINT: see run_worker)."""
    skill = load_skill(settings.skill_dir)  # fail fast: a broken skill or missing key
    # llm.criterion_models names criteria of this skill and catalogue models whatever the
    # provider (the offline one too: a typo must not wait for the switch to a paid one)
    check_overrides(settings, skill)
    provider = provider or make_provider(settings)
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(factory.release, provider)  # on every exit, refusals included
        require_credentials(provider)
        metrics = metrics or Metrics.create()
        await check_provider(provider, settings.llm, metrics)  # unknown/retired model: exit 2
        await ensure_topics(settings, role="judge")
        # Cache breakpoints go only where the prefix clears this model's minimum (catalogue).
        min_cache = None if is_offline(provider) else model_entry(settings.llm).min_cache_tokens
        journal = None if is_offline(provider) else await stack.enter_async_context(
            open_journal(settings.kafka, settings.topics.llm_journal))
        gates = GateAnswers(skill)
        # llm.criterion_models: criteria judged by another model (checked: one-line errors)
        routes = {} if is_offline(provider) else build_routes(
            settings, skill, lambda s: make_provider(s))
        await check_routes(settings, routes, metrics, stack)  # closed with the stack
        judge = Judge(settings, skill, ChartStore(settings.charts_dir), provider, metrics,
                      min_cache_tokens=min_cache, gates=gates, routes=routes,
                      journal=journal)
        ledger = await ProducedIds.from_topic(settings.kafka,
                                              settings.topics.judge_results, "result_id", "job_id")
        worker = ConcurrentWorker(
            settings, name="judge", topic=settings.topics.judge_jobs,
            group_id=settings.groups.judge,
            handler=make_handler(judge, ledger, settings.topics.judge_results),
            concurrency=settings.llm.concurrency, metrics=metrics,
            **worker_options(settings.llm))
        log.info("judge worker: provider %s, model %s, prompt version %s, concurrency %d",
                 provider.name, provider.model, judge.prompt_version, settings.llm.concurrency)
        if (open_to_all := settings.open_admission("judge")) is not None:
            log.warning("judge worker: %s", open_to_all)
        for field_id, route in sorted(routes.items()):
            log.info("judge worker: criterion %s on model %s (effort %s), prompt version %s",
                     field_id, route.provider.model, route.settings.llm.effort or "default",
                     judge._versions[field_id])
        # Gated criteria get their gate cell's answer from the cell outcomes (when decided):
        # the follower catches up with the topics before the first job is judged.
        async with following(settings, gates):
            await serve_until(worker, stop)


def run_worker(settings: Settings) -> int:
    return worker_main.run_worker(
        "judge", settings, lambda metrics, stop: serve(settings, stop=stop, metrics=metrics),
        cannot_start=(AgentsError,))

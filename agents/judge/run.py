"""``judgeflow worker judge``: every job on the jobs topic -> exactly one JudgeResult.

Start-up: install the embedded-broker fetch backoff, make sure the topics exist, load the
phenotype skill (fail fast if broken), rebuild the result ledger from the results topic
(see :mod:`streams.produced`), then consume jobs with :class:`ConcurrentWorker`
(``llm.concurrency`` jobs at once; offsets committed only after results are acknowledged).
A record that is not a valid JudgeJob goes to the jobs DLQ; everything else yields a result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from typing import Any

import orjson
from pydantic import ValidationError

from agents.context.charts import ChartStore
from agents.errors import AgentsError
from agents.judge.judge import Judge
from agents.providers.base import Provider
from agents.providers.factory import is_offline, make_provider, model_entry, require_credentials
from agents.providers.journal import tombstone
from agents.providers.startup import check_provider
from schemas.chart_review import JudgeJob, JudgeResult
from schemas.errors import describe_record
from schemas.skill import load_skill
from streams import limits, worker_main
from streams.errors import BadRecord
from streams.fetch_backoff import install_idle_fetch_backoff
from streams.journal import open_journal
from streams.metrics import Metrics
from streams.produced import ProducedIds
from streams.runner import ConcurrentWorker, Output
from streams.series import result_headers
from streams.settings import Settings
from streams.topics import ensure_topics
from streams.worker_main import serve_until

log = logging.getLogger(__name__)


def decode_job(value: bytes | None) -> JudgeJob:
    try:
        return JudgeJob.model_validate_json(value or b"")
    except ValidationError as exc:
        errors = exc.errors(include_input=False)
        # documented DLQ types only (schemas.dlq.ERROR_TYPES): unparsable or too deeply
        # nested JSON is invalid_json, a parsed value that is not a valid job schema_error
        kind = "invalid_json" if any(e["type"] == "json_invalid" for e in errors) else (
            "schema_error")
        raise BadRecord(kind, f"JudgeJob invalid, {exc.error_count()} error(s): "
                        + describe_record(exc)) from None


def encode_result(result: JudgeResult) -> bytes:
    return orjson.dumps(result.model_dump(mode="json"))


def make_handler(judge: Judge, ledger: ProducedIds, results_topic: str) -> Any:
    async def handle(rec: Any) -> Sequence[Output]:
        job = decode_job(rec.value)
        if problems := limits.job_problems(job):
            raise BadRecord("oversized", "; ".join(problems))
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
    install_idle_fetch_backoff(settings.kafka.idle_fetch_backoff_ms)
    skill = load_skill(settings.skill_dir)  # fail fast: a broken skill or missing key
    provider = provider or make_provider(settings)
    require_credentials(provider)
    metrics = metrics or Metrics.create()
    await check_provider(provider, settings.llm, metrics)  # unknown/retired model: exit 2
    await ensure_topics(settings)
    # Cache breakpoints go only where the prefix clears this model's minimum (catalogue data).
    min_cache = None if is_offline(provider) else model_entry(settings.llm).min_cache_tokens
    async with contextlib.AsyncExitStack() as stack:
        journal = None if is_offline(provider) else await stack.enter_async_context(
            open_journal(settings.kafka.bootstrap_servers, settings.topics.llm_journal))
        judge = Judge(settings, skill, ChartStore(settings.charts_dir), provider, metrics,
                      min_cache_tokens=min_cache, journal=journal)
        ledger = await ProducedIds.from_topic(settings.kafka.bootstrap_servers,
                                              settings.topics.judge_results, "result_id",
                                              "job_id")
        worker = ConcurrentWorker(
            settings, name="judge", topic=settings.topics.judge_jobs,
            group_id=settings.groups.judge,
            handler=make_handler(judge, ledger, settings.topics.judge_results),
            concurrency=settings.llm.concurrency, metrics=metrics)
        log.info("judge worker: provider %s, model %s, prompt version %s, concurrency %d",
                 provider.name, provider.model, judge.prompt_version, settings.llm.concurrency)
        await serve_until(worker, stop, provider)


def run_worker(settings: Settings) -> int:
    return worker_main.run_worker(
        "judge", settings, lambda metrics, stop: serve(settings, stop=stop, metrics=metrics),
        cannot_start=(AgentsError,))

"""Run the debrief worker process (``judgeflow worker debrief``): its own consumer group,
scaled independently of the chart-review workers."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from agents.debrief.grader import DebriefGrader
from agents.debrief.handler import DebriefHandler
from agents.errors import AgentsError
from agents.providers import catalogue
from agents.providers.factory import is_offline, make_provider, release, require_credentials
from agents.providers.settings import worker_options
from agents.providers.startup import check_provider
from agents.settings import Settings
from streams import worker_main
from streams.journal import open_journal
from streams.metrics import Metrics
from streams.produced import ProducedIds
from streams.runner import ConcurrentWorker
from streams.topics import ensure_topics
from streams.worker_main import serve_until

log = logging.getLogger(__name__)


async def serve(settings: Settings, metrics: Metrics | None = None,
                stop: asyncio.Event | None = None) -> None:
    metrics = metrics or Metrics.create()
    # read whatever the provider (offline too: a bad file must not wait for a paid one)
    catalogue.load(settings.llm.models_file)
    provider = make_provider(settings)
    topics = settings.topics
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(release, provider)  # on every exit, refusals included
        require_credentials(provider)  # fail fast, before touching the broker
        await check_provider(provider, settings.llm, metrics)  # unknown/retired model: exit 2
        await ensure_topics(settings, role="debrief")
        journal = None if is_offline(provider) else await stack.enter_async_context(
            open_journal(settings.kafka, topics.llm_journal))
        grader = DebriefGrader(settings, provider, metrics, journal=journal)
        produced = await ProducedIds.from_topic(settings.kafka,
                                                topics.case_evaluations, "evaluation_id",
                                                "request_id")
        handler = DebriefHandler(grader, topics.case_evaluations, produced,
                                 frozenset(settings.debrief_cases))
        worker = ConcurrentWorker(settings, name="debrief", topic=topics.debrief_requests,
                                  group_id=settings.groups.debrief, handler=handler,
                                  concurrency=settings.llm.concurrency, metrics=metrics,
                                  **worker_options(settings.llm))
        log.info("debrief worker: provider %s, prompt %s, %d evaluation(s) already published",
                 provider.name, grader.prompt_version, len(produced))
        if (open_to_all := settings.open_admission("debrief")) is not None:
            log.warning("debrief worker: %s", open_to_all)
        await serve_until(worker, stop)


def run_worker(settings: Settings) -> int:
    return worker_main.run_worker("debrief", settings,
                                  lambda metrics, stop: serve(settings, metrics, stop),
                                  cannot_start=(AgentsError,))

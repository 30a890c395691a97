"""Run the debrief worker process (``judgeflow worker debrief``): its own consumer group,
scaled independently of the chart-review workers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal

from agents.debrief.grader import DebriefGrader
from agents.debrief.handler import DebriefHandler
from agents.errors import AgentsError
from agents.providers.factory import make_provider, require_credentials
from agents.providers.startup import check_provider
from streams.fetch_backoff import install_idle_fetch_backoff
from streams.metrics import Metrics
from streams.produced import ProducedIds
from streams.runner import ConcurrentWorker
from streams.settings import Settings
from streams.topics import ensure_topics

log = logging.getLogger(__name__)


async def serve(settings: Settings, metrics: Metrics | None = None) -> None:
    metrics = metrics or Metrics.create()
    provider = make_provider(settings)
    require_credentials(provider)  # fail fast, before touching the broker
    await check_provider(provider, settings.llm, metrics)  # unknown/retired model: exit 2
    await ensure_topics(settings)
    grader = DebriefGrader(settings, provider, metrics)
    topics = settings.topics
    produced = await ProducedIds.from_topic(settings.kafka.bootstrap_servers,
                                            topics.case_evaluations, "evaluation_id",
                                            "request_id")
    handler = DebriefHandler(grader, topics.case_evaluations, produced)
    worker = ConcurrentWorker(settings, name="debrief", topic=topics.debrief_requests,
                              group_id=settings.groups.debrief, handler=handler,
                              concurrency=settings.llm.concurrency, metrics=metrics)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, worker.stop)
    log.info("debrief worker: provider %s, prompt %s, %d evaluation(s) already published",
             provider.name, grader.prompt_version, len(produced))
    try:
        await worker.run()
    finally:
        close = getattr(provider, "aclose", None)
        if close is not None:
            await close()


def run_worker(settings: Settings) -> int:
    install_idle_fetch_backoff(settings.kafka.idle_fetch_backoff_ms)
    metrics = Metrics.create()
    metrics.serve(settings.metrics_port, settings.metrics_host)
    try:
        asyncio.run(serve(settings, metrics))
    except AgentsError as exc:
        log.error("debrief worker cannot start: %s", exc)
        return 2
    return 0

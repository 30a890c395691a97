"""The judge and the debrief as replay targets: the worker's own handler, decoder, result
ids and ledger, built exactly as ``judgeflow worker judge|debrief`` builds them."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agents.context.charts import ChartStore
from agents.debrief.grader import DebriefGrader
from agents.debrief.handler import DebriefHandler, parse_request
from agents.errors import AgentsError
from agents.judge.gates import GateAnswers
from agents.judge.gates_feed import following
from agents.judge.judge import Judge
from agents.judge.routes import Route, build_routes, check_overrides, check_routes
from agents.judge.run import accept_job, make_handler
from agents.providers.factory import is_offline, make_provider, model_entry
from agents.replay.batch import PresetProvider
from agents.replay.driver import Pricing, Target
from agents.settings import Settings
from schemas.chart_review import JudgeJob
from schemas.medkit import DebriefRequest
from schemas.skill import load_skill
from streams.journal import Journal
from streams.metrics import Metrics
from streams.produced import ProducedIds, Series


@dataclass(frozen=True)
class Filters:
    task: str | None = None
    criterion: str | None = None
    kind: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return {"task": self.task, "criterion": self.criterion, "kind": self.kind}

    def keep_job(self, job: JudgeJob) -> bool:
        return ((self.task is None or job.task_id == self.task)
                and (self.criterion is None or job.field_id == self.criterion)
                and (self.kind is None or job.kind == self.kind))


def check_filter(flag: str, value: str | None, known: set[str] | list[str]) -> None:
    """A filter value that matches nothing is a mistake (typo), not an empty replay:
    one line naming the known values."""
    if value is not None and value not in known:
        names = ", ".join(sorted(known)) or "none"
        raise AgentsError(f"unknown {flag} {value!r}; known: {names}")


def min_cache(settings: Settings, provider: Any) -> int | None:
    return None if is_offline(provider) else model_entry(settings.llm).min_cache_tokens


async def start_routes(settings: Settings, routes: dict[str, Route], metrics: Metrics,
                       stack: contextlib.AsyncExitStack, *, batch: bool = False) -> None:
    """The worker's start-up checks for every per-criterion provider (credentials, the
    Models API: unknown or retired model, effort), each closed when the replay ends; with
    ``batch`` each model must also support the Message Batches API."""
    for route in await check_routes(settings, routes, metrics, stack):
        p = route.provider
        facts = getattr(p, "facts", None)
        if batch and facts is not None and not facts.batch:
            raise AgentsError(f"--batch: the Models API says {p.model} (llm.criterion_models) "
                              "does not support the Message Batches API; replay without --batch")


async def judge_target(settings: Settings, provider: Any, metrics: Metrics,
                       filters: Filters, journal: Journal | None = None, *,
                       stack: contextlib.AsyncExitStack) -> tuple[Target, Series]:
    """The judge worker's judge, routes and gate answers. ``provider`` may be the
    :class:`PresetProvider` of a ``--batch`` replay: each route's provider is then wrapped
    too (sharing its batch answers), so the batch run has the version, the models and the
    efforts of the dry run. Gate answers (cell outcomes, adjudications outranking) are read
    to the end before the first job, as the worker does; the offline heuristic uses none."""
    skill = load_skill(settings.skill_dir)
    check_filter("--criterion", filters.criterion, {*skill.criteria, *skill.unavailable})
    batch = isinstance(provider, PresetProvider)
    make: Callable[[Settings], Any] = (
        (lambda s: PresetProvider(make_provider(s), provider.presets)) if batch
        else make_provider)
    check_overrides(settings, skill)  # as the worker: a typo is an error on every provider
    routes = {} if is_offline(provider) else build_routes(settings, skill, make)
    await start_routes(settings, routes, metrics, stack, batch=batch)
    gates = None
    if not is_offline(provider):
        gates = await stack.enter_async_context(following(settings, GateAnswers(skill),
                                                          "replay"))
    judge = Judge(settings, skill, ChartStore(settings.charts_dir), provider, metrics,
                  min_cache_tokens=min_cache(settings, provider), gates=gates, routes=routes,
                  journal=journal)
    ledger = await ProducedIds.from_topic(settings.kafka,
                                          settings.topics.judge_results, "result_id", "job_id")
    topics = settings.topics
    tasks = frozenset(settings.tasks)

    def decode(value: bytes | None) -> JudgeJob:
        # the worker's check: a job it would dead-letter is neither priced, submitted to a
        # batch nor judged (the batch path submits before the handler runs)
        return accept_job(value, skill, tasks)

    def pricing(job: JudgeJob) -> Pricing:
        s, p = judge.route(job.field_id)
        return Pricing(p, s.llm, min_cache(s, p))

    target = Target(
        worker="judge", version=judge.series_version, input_topic=topics.judge_jobs,
        output_topic=topics.judge_results,
        handler=make_handler(judge, ledger, topics.judge_results), decode=decode,
        result_id=judge.result_id, published=ledger.__contains__,
        first_request=judge.first_request, keep=filters.keep_job, pricing=pricing)
    return target, ledger.series


async def debrief_target(settings: Settings, provider: Any, metrics: Metrics,
                         journal: Journal | None = None) -> tuple[Target, Series]:
    grader = DebriefGrader(settings, provider, metrics, journal=journal)
    topics = settings.topics
    produced = await ProducedIds.from_topic(settings.kafka,
                                            topics.case_evaluations, "evaluation_id",
                                            "request_id")

    cases = frozenset(settings.debrief_cases)

    def decode(value: bytes | None) -> DebriefRequest:
        # the worker's check: a request for a case outside the catalogue is not graded
        return parse_request(value, cases)

    def first(request: DebriefRequest) -> Any:
        return None if grader.offline else grader.first_request(request)

    target = Target(
        worker="debrief", version=grader.prompt_version,
        input_topic=topics.debrief_requests, output_topic=topics.case_evaluations,
        handler=DebriefHandler(grader, topics.case_evaluations, produced, cases),
        decode=decode, result_id=lambda r: grader.evaluation_id(r.request_id),
        published=produced.__contains__, first_request=first)
    return target, produced.series

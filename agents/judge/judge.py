"""Judge one job: JudgeJob -> JudgeResult, or :class:`LLMUnavailable` (-> DLQ, replayable).

* ``type_drift`` -> decided in code from the answer schema (no LLM call).
* unknown criterion, no answers, no notes for the patient -> ``fallback`` without a call.
* offline provider -> the deterministic heuristic, validated like a model answer.
* LLM: one request; ``refusal`` (or ``model_context_window_exceeded``) -> fallback;
  ``max_tokens`` -> asked once more with twice the token budget; an answer that fails
  validation (unparsable, missing/unknown keys, answer outside the schema ...) -> one repair
  round-trip that shows the model its answer and the problems, then fallback. An answer
  with an invented quote gets the same one round-trip; if it persists (or another rule the
  reviewer must see is broken: no usable pointer, contradictory fields —
  ``validate.NEEDS_REVIEW``) the result is published with status ``flagged``.
* A transient :class:`LLMError` (429/529/5xx/timeout/connection after our retries), on the
  first call or on the repair call alike, is not a result: :class:`LLMUnavailable` is raised,
  the runner's breaker waits and judges the job again (the journal gives back the answers
  already paid), and a job that keeps failing is dead-lettered as ``llm_unavailable`` for a
  replay. A permanent one (auth, bad request ...)
  -> fallback. Other non-fatal problems (unknown note ids ...) are repaired or flagged in
  place and listed in ``validation``.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from agents.context.assemble import CaseContext, gather
from agents.context.charts import ChartStore
from agents.errors import LLMError
from agents.judge import offline_tools, tool_loop
from agents.judge.case import UNKNOWN
from agents.judge.gates import GateAnswers
from agents.judge.offline import VERSION as OFFLINE_VERSION
from agents.judge.offline import offline_payload
from agents.judge.parse import parse_response
from agents.judge.prompt import DEFAULT_MIN_CACHE_TOKENS, build_request, repair_request
from agents.judge.read_checks import check_read, seen_spans
from agents.judge.reviewers import correct_agents, error_agent
from agents.judge.routes import Route
from agents.judge.typedrift import type_drift_analysis
from agents.judge.validate import (
    REPAIRABLE,
    UNTRUSTED,
    Check,
    needs_review,
    problem,
    validate_analysis,
)
from agents.judge.versioning import prompt_version, result_id, typedrift_version
from agents.providers.base import LLMRequest, LLMResponse, Provider
from agents.providers.factory import is_offline
from agents.providers.journal import Recall, journal_key
from agents.providers.session import LLMSession
from agents.settings import Settings
from agents.transient import LLMUnavailable, is_transient
from schemas.chart_review import JudgeAnalysis, JudgeJob, JudgeResult, ValidationProblem
from schemas.ids import derive_id
from schemas.skill import Criterion, Skill
from streams.detect.normalize import canonicalize, to_json_value
from streams.journal import Journal
from streams.metrics import Metrics

log = logging.getLogger(__name__)
WORKER = "judge"
#: stop reasons after which the answer is not used (max_tokens is first retried once)
_UNUSABLE = {"refusal": "declined to answer", "max_tokens": "ran out of tokens",
             "model_context_window_exceeded": "ran out of context window"}


def fallback_analysis(reason: str) -> JudgeAnalysis:
    return JudgeAnalysis(suggested_answer=None,
                         reasoning=f"judge could not analyze this cell: {reason}",
                         evidence_pointers=(), agent_correctness="n_a",
                         classification_hint="n_a", judge_confidence="low")


def settled(p: ValidationProblem, fixed: bool) -> ValidationProblem:
    """A first answer's problem once the repair gave a usable answer: repaired (when it
    made the answer unusable, or the repair fixed it), except an untrusted answer's, which
    stays flagged."""
    if p.type in UNTRUSTED:
        return p.model_copy(update={"action": "flagged"})
    if p.action == "fallback" or fixed:
        return p.model_copy(update={"action": "repaired"})
    return p


@dataclasses.dataclass
class JobJudging:
    """The bookkeeping of judging one job: its LLM session, problems, why it fell back."""

    session: LLMSession
    provider: str
    #: set when code, not a model, answered (a type-drift job)
    model: str | None = None
    problems: list[ValidationProblem] = dataclasses.field(default_factory=list)
    reason: str = ""
    #: what the chart tools showed (None: no tools offered for this job)
    trace: tool_loop.Trace | None = None
    #: note id -> spans shown up front (pointer checks when tools were offered)
    excerpts: dict[str, list[tuple[int, int]]] = dataclasses.field(default_factory=dict)

    def fail(self, kind: str, reason: str) -> None:
        self.problems.append(problem(kind, reason, "fallback"))
        self.reason = reason


class Judge:
    def __init__(self, settings: Settings, skill: Skill, store: ChartStore, provider: Provider,
                 metrics: Metrics | None = None, min_cache_tokens: int | None = None,
                 gates: GateAnswers | None = None,
                 routes: Mapping[str, Route] | None = None,
                 journal: Journal | None = None) -> None:
        self.settings = settings
        #: paid answers kept until the result is published (never paid twice)
        self.journal = journal
        self.skill = skill
        self.store = store
        self.provider = provider
        self.metrics = metrics or Metrics.create()
        self.offline = is_offline(provider)
        self.structured = settings.llm.structured_output
        self.prompt_version = prompt_version(settings, skill, provider.name, provider.model)
        self._drift_versions = {fid: typedrift_version(c) for fid, c in skill.criteria.items()}
        #: the model's minimum cacheable prefix (breakpoints only where a prefix clears it)
        self.min_cache_tokens = min_cache_tokens or DEFAULT_MIN_CACHE_TOKENS
        #: gate cells' answers (from cell outcomes); None: the prompt says "not known"
        self.gates = gates
        #: criteria judged by another model/effort (llm.criterion_models), each with its own
        #: prompt version; ignored by the offline provider (no model to switch)
        self.routes = {} if self.offline else dict(routes or {})
        self._versions = {fid: prompt_version(r.settings, skill, r.provider.name,
                                              r.provider.model)
                          for fid, r in self.routes.items()}

    def version_for(self, job: JudgeJob) -> str:
        """The prompt version; type-drift cells (settled in code) have their own."""
        if job.kind == "type_drift" and job.field_id in self._drift_versions:
            return self._drift_versions[job.field_id]
        return self._versions.get(job.field_id, self.prompt_version)

    @property
    def series_version(self) -> str:
        """The prompt version, extended by the per-criterion versions when some criteria
        run on another model (names a replay's consumer group, so changing an override
        starts a new replay instead of resuming the old one)."""
        if not self._versions:
            return self.prompt_version
        routes = ",".join(f"{f}={v}" for f, v in sorted(self._versions.items()))
        return f"{self.prompt_version}+routes-{derive_id(routes, length=8)}"

    def route(self, field_id: str) -> tuple[Settings, Provider]:
        """The settings and provider that judge ``field_id``."""
        r = self.routes.get(field_id)
        return (self.settings, self.provider) if r is None else (r.settings, r.provider)

    def _min_cache(self, provider: Provider) -> int:
        """The minimum cacheable prefix of the provider's model (catalogue data)."""
        if provider is self.provider or self.offline:
            return self.min_cache_tokens
        entry = getattr(provider, "entry", None)
        return entry.min_cache_tokens if entry is not None else self.min_cache_tokens

    def result_id(self, job: JudgeJob) -> str:
        return result_id(job.job_id, self.version_for(job))

    def journal_key(self, job: JudgeJob) -> str:
        return journal_key(WORKER, self.result_id(job))

    def first_request(self, job: JudgeJob) -> LLMRequest | None:
        """The first request judging ``job`` sends (None: decided without a model call);
        replay estimates cost from it."""
        criterion = self.skill.criterion(job.field_id)
        if criterion is None or job.kind == "type_drift" or not job.answers or self.offline:
            return None
        notes = self.store.notes(job.patient_id)
        return self._request(job, criterion, notes)[0] if notes else None

    def tools_for(self, field_id: str, context_of: Callable[[], CaseContext]) -> bool:
        """Whether the judge of this cell gets the chart tools (the mode per criterion; auto:
        the context left a note or part of one out, or an agent cited a missing note).
        ``context_of`` is called only in auto mode: gathering scans every note."""
        mode = self.route(field_id)[0].chart_tools.mode_for(field_id)
        if mode != "auto":
            return mode == "on"
        context = context_of()
        partial = any(e.end - e.start < e.note_length for e in context.excerpts)
        return bool(context.left_out or context.missing_cited or partial)

    def _request(self, job: JudgeJob, criterion: Criterion, notes: dict[str, str],
                 run: JobJudging | None = None) -> tuple[LLMRequest, tuple[str, ...]]:
        settings, provider = self.route(job.field_id)
        context = gather(job.answers, criterion.keywords, notes,
                         settings.llm.context_budget_chars)
        gate = (UNKNOWN if self.gates is None
                else self.gates.lookup(job.task_id, job.patient_id, criterion))
        request = build_request(self.skill, criterion, job, context, structured=self.structured,
                                max_tokens=settings.llm.max_tokens, notes=notes,
                                gate_answer=gate, min_cache_tokens=self._min_cache(provider))
        if self.tools_for(job.field_id, lambda: context):
            request = tool_loop.offer(request, settings.chart_tools)
            if run is not None:
                run.trace = tool_loop.Trace(settings.chart_tools)
                for e in context.excerpts:
                    run.excerpts.setdefault(e.note_id, []).append((e.start, e.end))
        return request, tuple(e.text for e in context.excerpts)

    async def judge(self, job: JudgeJob) -> JudgeResult:
        started = time.monotonic()
        settings, provider = self.route(job.field_id)
        recall = None if self.journal is None else Recall(self.journal, self.journal_key(job))
        session = LLMSession(provider, settings.llm, self.metrics, WORKER,
                             model=OFFLINE_VERSION if self.offline else provider.model,
                             recall=recall)
        run = JobJudging(session, provider.name)
        try:
            analysis = await self._analyse(job, run)
        except LLMError as exc:
            if is_transient(exc):
                self.metrics.results.labels(WORKER, job.kind, "llm_unavailable").inc()
                log.warning("judge %s kind=%s: model unavailable (%s) after %d call(s); "
                            "kept for a later try", self.result_id(job)[:12], job.kind,
                            exc.kind, session.calls)
                raise LLMUnavailable(exc) from None
            analysis = None
            run.fail("llm_error", f"the model call failed ({exc.kind})")
        status: Literal["ok", "fallback", "flagged"] = (
            "fallback" if analysis is None else "flagged" if needs_review(run.problems)
            else "ok")
        final = analysis or fallback_analysis(run.reason or "no usable answer")
        agents = tuple(a.agent_id for a in job.answers)
        result = JudgeResult(
            result_id=self.result_id(job), job_id=job.job_id, task_id=job.task_id,
            patient_id=job.patient_id, field_id=job.field_id, kind=job.kind, status=status,
            analysis=final, validation=tuple(run.problems),
            prompt_version=self.version_for(job),
            provider=run.provider, model=run.model or session.model,
            usage=session.usage_record(),
            latency_ms=int((time.monotonic() - started) * 1000), judged_at=datetime.now(UTC),
            agents=agents, error_agent=error_agent(final, agents),
            correct_agents=correct_agents(final, agents, job.normalized,
                                          self._canonical(job.field_id, final)),
            consulted=() if run.trace is None else tuple(run.trace.accesses))
        self.metrics.results.labels(WORKER, job.kind, status).inc()
        log.info("judged %s kind=%s status=%s problems=%s calls=%d", result.result_id[:12],
                 job.kind, status, ",".join(p.type for p in run.problems) or "-", session.calls)
        return result

    def _canonical(self, field_id: str, analysis: JudgeAnalysis) -> Any:
        """The suggested answer as the job's ``normalized`` values spell it (None: none)."""
        criterion = self.skill.criterion(field_id)
        if analysis.suggested_answer is None or criterion is None:
            return None
        return to_json_value(canonicalize(analysis.suggested_answer, criterion.answer_schema))

    async def _analyse(self, job: JudgeJob, run: JobJudging) -> JudgeAnalysis | None:
        criterion = self.skill.criterion(job.field_id)
        if criterion is None:
            run.fail("unknown_criterion", f"no criterion file for {job.field_id}")
            return None
        if job.kind == "type_drift":
            run.provider, run.model = "code", "answer-schema"
            return type_drift_analysis(job, criterion)
        if not job.answers:
            run.fail("no_answers", "the job carries no agent answers")
            return None
        notes = self.store.notes(job.patient_id)
        if not notes:
            run.fail("notes_missing", "no notes found for this patient")
            return None
        if self.offline:
            payload = offline_payload(job, criterion, notes)
            tools = self.settings.chart_tools
            budget = self.settings.llm.context_budget_chars
            if self.tools_for(job.field_id,
                              lambda: gather(job.answers, criterion.keywords, notes, budget)):
                run.trace = offline_tools.explore(job, criterion, notes, tools)
                payload = offline_tools.with_reads(payload, run.trace)
            return self._accept(self._validate(payload, criterion, notes, job, None), run)
        request, shown = self._request(job, criterion, notes, run)
        return await self._ask(request, criterion, notes, job, run, shown)

    def _validate(self, payload: object, criterion: Criterion, notes: dict[str, str],
                  job: JudgeJob, shown: tuple[str, ...] | None) -> Check:
        return validate_analysis(payload, criterion=criterion, notes=notes,
                                 n_agents=len(job.answers), kind=job.kind,
                                 agent_answers=job.normalized, shown=shown,
                                 extra_sources=(criterion.prompt, criterion.body))

    def _accept(self, check: Check, run: JobJudging) -> JudgeAnalysis | None:
        run.problems += check.problems
        if check.analysis is None:
            run.reason = "the answer failed validation (" + ", ".join(
                sorted({p.type for p in check.problems if p.action == "fallback"})) + ")"
        return check.analysis

    async def _ask(self, request: LLMRequest, criterion: Criterion, notes: dict[str, str],
                   job: JudgeJob, run: JobJudging, shown: tuple[str, ...]) -> JudgeAnalysis | None:
        resp, request = await self._turns(request, notes, run)
        repaired = False
        if resp.stop_reason == "max_tokens":
            run.problems.append(problem("max_tokens", "answer cut off at max_tokens; asked "
                                        "again with twice the budget", "repaired"))
            repaired = True
            resp, request = await self._turns(dataclasses.replace(
                request, max_tokens=2 * request.max_tokens), notes, run)
        if resp.stop_reason in _UNUSABLE:
            run.fail(resp.stop_reason, f"the model {_UNUSABLE[resp.stop_reason]} "
                     f"(stop_reason {resp.stop_reason})")
            return None
        check = self._check(resp, criterion, notes, job, shown, run)
        review = needs_review(check.problems, REPAIRABLE)
        if (check.analysis is not None and not review) or repaired:
            return self._accept(check, run)
        # one repair round-trip, showing the model its answer and what was wrong
        messages = [p.message for p in check.problems if p.action == "fallback"] + [
            p.message for p in review]
        try:
            resp2 = await self._call(repair_request(request, resp, messages), run)
        except LLMError as exc:
            if check.analysis is None or is_transient(exc):
                # a rate limit or outage on the repair is waited out like one on a first
                # call (LLMUnavailable: the breaker retries the job, the journal gives the
                # first answer back unpaid); only a permanent error keeps the first answer
                run.problems += check.problems
                raise
            run.problems += [*check.problems, problem("llm_error", f"the repair call failed "
                                                      f"({exc.kind}); first answer kept")]
            return check.analysis
        second = self._check(resp2, criterion, notes, job, shown, run) if resp2.stop_reason not in (
            _UNUSABLE) else Check(None, (problem(
                resp2.stop_reason, f"repair answer ended with {resp2.stop_reason}", "fallback"),))
        if second.analysis is not None:
            fixed = not needs_review(second.problems, REPAIRABLE)
            run.problems += [settled(p, fixed and p in review) for p in check.problems]
            return self._accept(second, run)
        if check.analysis is not None:  # the repair made it worse: keep the first answer
            run.problems += [*check.problems, problem(
                "repair_unusable", "the repair answer was unusable; the first answer is kept")]
            return check.analysis
        run.problems += check.problems
        return self._accept(second, run)

    def _check(self, resp: LLMResponse, criterion: Criterion, notes: dict[str, str],
               job: JudgeJob, shown: tuple[str, ...], run: JobJudging) -> Check:
        parsed = parse_response(resp, structured=self.structured)
        if parsed.payload is None:
            return Check(None, parsed.problems)
        trace = run.trace
        if trace is not None:  # text found through the tools counts as shown
            shown = (*shown, *trace.texts())
        check = self._validate(parsed.payload, criterion, notes, job, shown)
        more = () if trace is None or check.analysis is None else tuple(
            check_read(check.analysis, seen_spans(run.excerpts, trace.spans())))
        return Check(check.analysis, (*parsed.problems, *check.problems, *more))

    async def _turns(self, request: LLMRequest, notes: dict[str, str],
                     run: JobJudging) -> tuple[LLMResponse, LLMRequest]:
        """One call, or the tool loop when the job was offered the tools: the model's
        answer and the request that got it (a repair continues from there)."""
        if run.trace is None:
            return await self._call(request, run), request
        session = run.session
        return await tool_loop.run(lambda r: self._call(r, run), request, notes, run.trace,
                                   lambda: (_tokens(session), session.cost))

    async def _call(self, request: LLMRequest, run: JobJudging) -> LLMResponse:
        return await run.session.complete(request)


def _tokens(session: LLMSession) -> int:
    u = session.usage
    return (u.input_tokens + u.output_tokens + u.cache_read_input_tokens
            + u.cache_creation_input_tokens)

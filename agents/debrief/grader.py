"""Grading orchestration: one request in, one validated :class:`CaseEvaluation` out.

LLM path, on a model whose Models API capabilities list structured outputs: the attending
prompt with ``output_config.format`` = the ``render_case_evaluation`` input schema; the
reply's text is the evaluation (a reply that still fails our checks gets one repair turn).
Elsewhere: the strict ``render_case_evaluation`` tool and
``tool_choice: auto``. A reply without exactly one usable tool call (no call, the retired
``render_case_grade`` tool, invalid input, wrong case) gets one repair round-trip: the
conversation continues with the assistant turn passed back exactly as received (thinking
blocks and signatures included: the API rejects a continued turn without them), then the
tool results. A reply cut at ``max_tokens`` is asked again with ``llm.repair_max_tokens``.
If the second reply is still unusable the request is dead-lettered (``invalid_output``) -
never a half-valid evaluation. LLM failures that survive the provider's bounded retries (429/529
cool-downs included) are dead-lettered as ``llm_failure`` for a later replay.
Offline path: the deterministic checklist grader. Both paths go through ``validate.check``.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from pydantic import ValidationError

from agents.debrief import offline, validate
from agents.debrief.autorubric import rubric_for
from agents.debrief.prompt import build_request, repair_request, repair_structured
from agents.debrief.versioning import debrief_version
from agents.errors import InvalidOutput, LLMError
from agents.providers.base import LLMRequest, LLMResponse, Provider
from agents.providers.factory import is_offline
from agents.providers.journal import Recall, journal_key
from agents.providers.session import LLMSession
from agents.settings import Settings
from agents.versioning import result_id
from schemas.chart_review import ValidationProblem
from schemas.errors import describe
from schemas.medkit import (
    LEGACY_TOOL_NAMES,
    TOOL_NAME,
    CaseEvaluation,
    CaseEvaluationInput,
    CaseRubric,
    DebriefRequest,
)
from streams.errors import BadRecord
from streams.journal import Journal
from streams.metrics import Metrics

log = logging.getLogger(__name__)

def evaluation_id(request_id: str, prompt_version: str) -> str:
    """Deterministic: a redelivered or replayed request gets the same id."""
    return result_id(request_id, prompt_version)


def validation_summary(exc: ValidationError, limit: int = 6) -> str:
    """The first ``limit`` field paths and messages (schemas.errors: never the values)."""
    return describe(exc, limit=limit, more=True)


@dataclass
class _Attempt:
    checked: validate.Checked | None
    reason: str | None


class DebriefGrader:
    def __init__(self, settings: Settings, provider: Provider,
                 metrics: Metrics | None = None, journal: Journal | None = None) -> None:
        self.settings = settings
        self.provider = provider
        self.metrics = metrics
        #: paid answers kept until the evaluation is published (never paid twice)
        self.journal = journal
        self.offline = is_offline(provider)
        self.prompt_version = debrief_version(settings, provider.name, provider.model)

    def evaluation_id(self, request_id: str) -> str:
        return evaluation_id(request_id, self.prompt_version)

    def journal_key(self, request_id: str) -> str:
        return journal_key("debrief", self.evaluation_id(request_id))

    async def evaluate(self, request: DebriefRequest) -> CaseEvaluation:
        """The validated evaluation; raises :class:`BadRecord` when there can be none."""
        started = time.monotonic()
        rubric, source = rubric_for(request)
        problems: list[ValidationProblem] = []
        recall = None if self.journal is None else Recall(
            self.journal, self.journal_key(request.request_id))
        session = LLMSession(self.provider, self.settings.llm, self.metrics, "debrief",
                             model=offline.MODEL, recall=recall)
        if self.offline:
            checked = validate.check(request, rubric, source, offline.grade(request, rubric))
        else:
            checked = await self._ask(session, request, rubric, source, problems)
        ev = CaseEvaluation.model_validate({
            **checked.payload.model_dump(mode="json"),
            "evaluation_id": self.evaluation_id(request.request_id),
            "request_id": request.request_id, "prompt_version": self.prompt_version,
            "provider": self.provider.name, "model": session.model,
            "usage": session.usage_record().model_dump(),
            "rubric_source": source,
            "dropped_criteria": [d.model_dump() for d in checked.dropped],
            "corrections": [c.model_dump() for c in checked.corrections],
            "rubric_unknown_refs": checked.rubric_unknown_refs,
            "unverified_quotes": [q.model_dump() for q in checked.unverified_quotes],
            "safety_findings": [b.model_dump() for b in checked.safety_findings],
            "validation": [p.model_dump() for p in [*problems, *checked.problems]],
            "latency_ms": int((time.monotonic() - started) * 1000),
            "evaluated_at": datetime.now(UTC),
        })
        if self.metrics is not None:
            status = "safety_breach" if ev.safety_breach else "ok"
            self.metrics.results.labels("debrief", source, status).inc()
        return ev

    async def _ask(self, session: LLMSession, request: DebriefRequest, rubric: CaseRubric,
                   source: str, problems: list[ValidationProblem]) -> validate.Checked:
        structured = await self._structured()
        first = build_request(request, rubric, source, self.settings.llm.max_tokens,
                              structured=structured)
        response = await self._call(session, first)
        attempt = self._interpret(response, request, rubric, source, structured)
        if attempt.reason is not None:
            problems.append(ValidationProblem(type="repair_round_trip", action="repaired",
                                              message=attempt.reason))
            retry = await self._call(session, self._repair(first, response, attempt.reason))
            response, attempt = retry, self._interpret(retry, request, rubric, source,
                                                       structured)
        if attempt.checked is None:
            raise BadRecord("invalid_output", f"after one repair round-trip: {attempt.reason}")
        return attempt.checked

    async def _structured(self) -> bool:
        """Structured outputs, where the Models API says the model has them."""
        ask = getattr(self.provider, "model_facts", None)
        if ask is not None:
            await ask()
        return self._structured_known()

    def _structured_known(self) -> bool:
        facts = getattr(self.provider, "facts", None)
        return bool(facts is not None and facts.structured_outputs)

    def first_request(self, request: DebriefRequest) -> LLMRequest:
        """The first request :meth:`evaluate` sends (a batch replay submits it), on the path
        the facts known so far choose (the start-up check asked the Models API)."""
        rubric, source = rubric_for(request)
        return build_request(request, rubric, source, self.settings.llm.max_tokens,
                             structured=self._structured_known())

    def _repair(self, first: LLMRequest, response: LLMResponse, reason: str) -> LLMRequest:
        if response.stop_reason == "max_tokens":  # cut short: ask again with more room
            budget = max(first.max_tokens, self.settings.llm.repair_max_tokens)
            return replace(first, max_tokens=budget)
        if first.output_schema is not None:
            return repair_structured(first, response, reason)
        repair = repair_request(first, response, reason)
        if not response.content:
            return repair
        messages = list(repair.messages)
        messages[len(first.messages)] = response.assistant_turn()  # unmodified, thinking too
        return replace(repair, messages=tuple(messages))

    async def _call(self, session: LLMSession, request: LLMRequest) -> LLMResponse:
        try:
            response = await session.complete(request)
        except LLMError as exc:
            raise BadRecord("llm_failure", f"{exc.kind}: {exc.message}") from exc
        if response.stop_reason == "refusal":
            raise BadRecord("llm_failure", "the model refused to evaluate this encounter")
        if response.stop_reason == "model_context_window_exceeded":
            raise BadRecord("llm_failure", "the request exceeds the model's context window")
        return response

    def _interpret(self, response: LLMResponse, request: DebriefRequest, rubric: CaseRubric,
                   source: str, structured: bool = False) -> _Attempt:
        if structured:
            return self._interpret_json(response, request, rubric, source)
        names = [c.name for c in response.tool_calls]
        legacy = [n for n in names if n in LEGACY_TOOL_NAMES]
        ours = [c for c in response.tool_calls if c.name == TOOL_NAME]
        if legacy:
            log.warning("debrief: model used the retired %s tool; rejected", legacy[0])
            return _Attempt(None, f"{legacy[0]} is retired and was rejected; only {TOOL_NAME} "
                                  "is accepted")
        if not ours:
            why = "stopped at max_tokens" if response.stop_reason == "max_tokens" else ""
            return _Attempt(None, f"no {TOOL_NAME} tool call {why}".strip())
        if len(ours) > 1 or len(names) > 1:
            return _Attempt(None, f"expected exactly one tool call, got {', '.join(names)}")
        try:
            payload = CaseEvaluationInput.model_validate(ours[0].input)
            return _Attempt(validate.check(request, rubric, source, payload), None)
        except ValidationError as exc:
            return _Attempt(None, f"{TOOL_NAME} input is invalid: {validation_summary(exc)}")
        except InvalidOutput as exc:
            return _Attempt(None, str(exc))

    def _interpret_json(self, response: LLMResponse, request: DebriefRequest,
                        rubric: CaseRubric, source: str) -> _Attempt:
        if response.stop_reason == "max_tokens":
            return _Attempt(None, "the evaluation stopped at max_tokens")
        try:
            payload = CaseEvaluationInput.model_validate_json(response.text)
            return _Attempt(validate.check(request, rubric, source, payload), None)
        except ValidationError as exc:
            return _Attempt(None, f"the evaluation is invalid: {validation_summary(exc)}")
        except InvalidOutput as exc:
            return _Attempt(None, str(exc))

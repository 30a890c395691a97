"""The record handler of the debrief worker: bytes in, evaluation record (or DLQ) out.

A model that could not be reached (429/529/5xx/timeout/connection after our retries) is
not a verdict on the request: it is dead-lettered as ``llm_unavailable`` (replayable), not
``llm_failure`` (permanent: auth, bad request, refusal), and the answers paid so far stay in
the LLM journal for the retry. Any other dead letter after a model call (``invalid_output``,
``llm_failure``) takes the request's journal entry with it (a tombstone sent after the
letter), so ``judgeflow replay dlq`` gets a fresh answer instead of the one that failed."""

from __future__ import annotations

import logging
from collections.abc import Set
from typing import Any

import orjson

from agents.debrief.grader import DebriefGrader
from agents.errors import LLMError
from agents.providers.journal import tombstone
from agents.transient import LLMUnavailable, is_transient
from schemas.medkit import DebriefRequest
from streams import tracing
from streams.decode import decode_record
from streams.errors import BadRecord
from streams.produced import ProducedIds, result_headers
from streams.runner import Output

log = logging.getLogger(__name__)


def parse_request(value: bytes | None, cases: Set[str] = frozenset()) -> DebriefRequest:
    """The request in a record value; :class:`BadRecord` (-> DLQ) when unusable, and
    ``unknown_case`` when ``cases`` (the configured catalogue, empty: any case) does not
    list its case: checked before anything is paid."""
    request = decode_record(DebriefRequest, value)
    if cases and request.case_id not in cases:
        raise BadRecord("unknown_case", "case_id is not a case of the configured catalogue "
                        "(debrief_cases)")
    return request


class DebriefHandler:
    """Grades each request once per prompt version: ids already on the output topic (read
    at start) and ids published by this process are skipped; concurrent duplicates wait
    (:class:`streams.produced.ProducedIds`)."""

    def __init__(self, grader: DebriefGrader, output_topic: str,
                 produced: ProducedIds | None = None, cases: Set[str] = frozenset()) -> None:
        self.grader = grader
        #: the case catalogue (``debrief_cases``): a request for another case is
        #: dead-lettered ``unknown_case`` before it is graded; empty: every case is graded
        self.cases = cases
        self.output_topic = output_topic
        #: ids produced, and earlier evaluations by request and version (``supersedes``)
        self.produced = produced if produced is not None else ProducedIds()

    async def __call__(self, record: Any) -> list[Output]:
        request = parse_request(record.value, self.cases)
        eid = self.grader.evaluation_id(request.request_id)
        tracing.annotate(request_id=request.request_id, evaluation_id=eid)
        async with self.produced.claim(eid) as fresh:
            if not fresh:
                log.info("debrief: evaluation %s already published; skipped", eid[:12])
                return tombstone(self.grader.journal, self.grader.journal_key(
                    request.request_id))
            try:
                evaluation = await self.grader.evaluate(request)
            except BadRecord as exc:
                cause = exc.__cause__
                if isinstance(cause, LLMError) and is_transient(cause):
                    raise LLMUnavailable(cause) from None  # paid answers kept: reused later
                # invalid_output, a refusal, a permanent error: the answers paid are the
                # reason for the dead letter, so they go with it (tombstone after the letter
                # is acknowledged) and a re-drive of the letter asks the model afresh
                exc.after = (*exc.after, *tombstone(
                    self.grader.journal, self.grader.journal_key(request.request_id)))
                raise
        old = self.produced.series.supersedes(request.request_id, evaluation.prompt_version)
        if old is not None:
            evaluation = evaluation.model_copy(update={"supersedes": old})
        value = orjson.dumps(evaluation.model_dump(mode="json"))
        headers = result_headers(eid, evaluation.prompt_version, "request_id",
                                 request.request_id, old)
        return [Output(self.output_topic, request.request_id.encode(), value,
                       (("evaluation_id", eid.encode()), *headers)),
                *tombstone(self.grader.journal, self.grader.journal_key(request.request_id))]

"""The record handler of the debrief worker: bytes in, evaluation record (or DLQ) out.

A model that could not be reached (429/529/5xx/timeout/connection after our retries) is
not a verdict on the request: it is dead-lettered as ``llm_unavailable`` (replayable), not
``llm_failure`` (permanent: auth, bad request, refusal), and the answers paid so far stay in
the LLM journal for the retry. Any other dead letter after a model call (``invalid_output``,
``llm_failure``) takes the request's journal entry with it (a tombstone sent after the
letter), so ``judgeflow replay dlq`` gets a fresh answer instead of the one that failed."""

from __future__ import annotations

import logging
from typing import Any

import orjson
from pydantic import ValidationError

from agents.debrief.grader import DebriefGrader
from agents.errors import LLMError
from agents.providers.journal import tombstone
from agents.transient import LLMUnavailable, is_transient
from schemas.errors import describe_record
from schemas.medkit import DebriefRequest
from streams import limits, tracing
from streams.errors import BadRecord
from streams.json_depth import depth_reason, too_deep
from streams.produced import ProducedIds
from streams.runner import Output
from streams.series import result_headers

log = logging.getLogger(__name__)


def parse_request(value: bytes | None) -> DebriefRequest:
    """The request in a record value; :class:`BadRecord` (-> DLQ) when unusable."""
    if len(value or b"") > limits.MAX_DEBRIEF_REQUEST_BYTES:
        raise BadRecord("oversized", f"request of {len(value or b'')} bytes exceeds the limit "
                        f"of {limits.MAX_DEBRIEF_REQUEST_BYTES} bytes")
    try:
        data = orjson.loads(value or b"")
    except orjson.JSONDecodeError as exc:
        depth = too_deep(value)
        if depth is not None:
            raise BadRecord("schema_error", f"DebriefRequest invalid: {depth_reason(depth)}"
                            ) from exc
        raise BadRecord("invalid_json", f"value is not JSON: {exc.msg}") from exc
    try:
        return DebriefRequest.model_validate(data)
    except ValidationError as exc:
        raise BadRecord("schema_error", describe_record(exc)) from None


class DebriefHandler:
    """Grades each request once per prompt version: ids already on the output topic (read
    at start) and ids published by this process are skipped; concurrent duplicates wait
    (:class:`streams.produced.ProducedIds`)."""

    def __init__(self, grader: DebriefGrader, output_topic: str,
                 produced: ProducedIds | None = None) -> None:
        self.grader = grader
        self.output_topic = output_topic
        #: ids produced, and earlier evaluations by request and version (``supersedes``)
        self.produced = produced if produced is not None else ProducedIds()

    async def __call__(self, record: Any) -> list[Output]:
        request = parse_request(record.value)
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

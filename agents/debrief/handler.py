"""The record handler of the debrief worker: bytes in, evaluation record (or DLQ) out.

A model that could not be reached (429/529/5xx/timeout/connection after our retries) is
not a verdict on the request: it is dead-lettered as ``llm_unavailable`` (replayable), not
``llm_failure`` (permanent: auth, bad request, refusal)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import orjson
from pydantic import ValidationError

from agents.debrief.grader import DebriefGrader, validation_summary
from agents.errors import LLMError
from agents.transient import LLMUnavailable, is_transient
from schemas.medkit import DebriefRequest
from streams import limits
from streams.errors import BadRecord
from streams.runner import Output
from streams.series import Series, result_headers

log = logging.getLogger(__name__)


def parse_request(value: bytes | None) -> DebriefRequest:
    """The request in a record value; :class:`BadRecord` (-> DLQ) when unusable."""
    if len(value or b"") > limits.MAX_DEBRIEF_REQUEST_BYTES:
        raise BadRecord("oversized", f"request of {len(value or b'')} bytes exceeds the limit "
                        f"of {limits.MAX_DEBRIEF_REQUEST_BYTES} bytes")
    try:
        data = orjson.loads(value or b"")
    except orjson.JSONDecodeError as exc:
        raise BadRecord("invalid_json", f"value is not JSON: {exc.msg}") from exc
    try:
        return DebriefRequest.model_validate(data)
    except ValidationError as exc:
        raise BadRecord("schema_error", validation_summary(exc)) from exc


class DebriefHandler:
    """Grades each request once per prompt version: ids already on the output topic (read
    at start) and ids published by this process are skipped; concurrent duplicates wait."""

    def __init__(self, grader: DebriefGrader, output_topic: str, seen: set[str],
                 series: Series | None = None) -> None:
        self.grader = grader
        self.output_topic = output_topic
        self.seen = seen
        #: earlier evaluations by request and version (``supersedes``)
        self.series = series or Series()
        self._locks: dict[str, asyncio.Lock] = {}

    async def __call__(self, record: Any) -> list[Output]:
        request = parse_request(record.value)
        eid = self.grader.evaluation_id(request.request_id)
        lock = self._locks.setdefault(eid, asyncio.Lock())
        try:
            async with lock:
                if eid in self.seen:
                    log.info("debrief: evaluation %s already published; skipped", eid[:12])
                    return []
                try:
                    evaluation = await self.grader.evaluate(request)
                except BadRecord as exc:
                    cause = exc.__cause__
                    if isinstance(cause, LLMError) and is_transient(cause):
                        raise LLMUnavailable(cause) from None
                    raise
                self.seen.add(eid)
        finally:
            if not lock.locked():
                self._locks.pop(eid, None)
        old = self.series.supersedes(request.request_id, evaluation.prompt_version)
        if old is not None:
            evaluation = evaluation.model_copy(update={"supersedes": old})
        value = orjson.dumps(evaluation.model_dump(mode="json"))
        headers = result_headers(eid, evaluation.prompt_version, "request_id",
                                 request.request_id, old)
        return [Output(self.output_topic, request.request_id.encode(), value,
                       (("evaluation_id", eid.encode()), *headers))]

"""The record handler: bad bytes -> typed BadRecord; one evaluation per request id."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import orjson
import pytest

from agents.debrief.grader import DebriefGrader
from agents.debrief.handler import DebriefHandler
from agents.errors import LLMError
from agents.providers.factory import OfflineProvider
from agents.settings import Settings
from schemas.dlq import ERROR_TYPES
from streams.errors import BadRecord
from streams.produced import ProducedIds
from tests.unit.agents.debrief.support import ScriptedProvider, good_payload, sample, tool_reply


@dataclass
class Rec:
    value: bytes | None


def _handler(seen: set[str] | None = None) -> DebriefHandler:
    return DebriefHandler(DebriefGrader(Settings(), OfflineProvider()), "out",
                          ProducedIds(seen or ()))


@pytest.mark.parametrize(("value", "error_type"), [
    (b"{not json", "invalid_json"),
    (None, "invalid_json"),
    (b'{"request_id": "r1"}', "schema_error"),
    (b'{"request_id": "../etc", "case_id": "c"}', "schema_error"),
])
async def test_unusable_records_raise_typed_bad_records(value: bytes | None,
                                                        error_type: str) -> None:
    with pytest.raises(BadRecord) as err:
        await _handler()(Rec(value))
    assert err.value.error_type == error_type


async def test_schema_error_message_names_fields_not_values() -> None:
    data = sample("req-cp-001").model_dump(mode="json")
    data["case_summary"]["severity"] = "PATIENT-SECRET"
    with pytest.raises(BadRecord) as err:
        await _handler()(Rec(orjson.dumps(data)))
    assert "case_summary.severity" in err.value.message
    assert "PATIENT-SECRET" not in err.value.message


async def test_a_request_becomes_one_keyed_record_and_is_not_graded_twice() -> None:
    handler = _handler()
    value = orjson.dumps(sample("req-cp-001").model_dump(mode="json"))
    [out] = await handler(Rec(value))
    assert out.topic == "out" and out.key == b"req-cp-001"
    ev = orjson.loads(out.value)
    assert dict(out.headers)["evaluation_id"] == ev["evaluation_id"].encode()
    assert await handler(Rec(value)) == []


async def test_an_evaluation_already_on_the_output_topic_is_skipped() -> None:
    grader = DebriefGrader(Settings(), OfflineProvider())
    seen = {grader.evaluation_id("req-cp-001")}
    value = orjson.dumps(sample("req-cp-001").model_dump(mode="json"))
    assert await DebriefHandler(grader, "out", ProducedIds(seen))(Rec(value)) == []


async def test_concurrent_duplicates_call_the_model_once() -> None:
    req = sample("req-sep-001")
    provider = ScriptedProvider(tool_reply(good_payload(req)))
    handler = DebriefHandler(DebriefGrader(Settings(), provider), "out")
    value = orjson.dumps(req.model_dump(mode="json"))
    results = await asyncio.gather(handler(Rec(value)), handler(Rec(value)))
    assert sorted(len(r) for r in results) == [0, 1]
    assert len(provider.requests) == 1


@pytest.mark.parametrize(("error", "error_type"), [
    (LLMError("rate_limited", "HTTP 429", retryable=True, status=429), "llm_unavailable"),
    (LLMError("overloaded", "HTTP 529", retryable=True, status=529), "llm_unavailable"),
    (LLMError("timeout", "deadline", retryable=True), "llm_unavailable"),
    (LLMError("server_error", "HTTP 500", retryable=False, status=500), "llm_unavailable"),
    (LLMError("auth", "HTTP 401", retryable=False, status=401), "llm_failure"),
    (LLMError("bad_request", "HTTP 400", retryable=False, status=400), "llm_failure"),
])
async def test_transient_llm_failures_are_replayable_dead_letters(
        error: LLMError, error_type: str) -> None:
    seen = ProducedIds()
    grader = DebriefGrader(Settings(llm={"provider": "anthropic"}), ScriptedProvider(error))
    handler = DebriefHandler(grader, "out", seen)
    with pytest.raises(BadRecord) as err:
        await handler(Rec(orjson.dumps(sample("req-cp-001").model_dump(mode="json"))))
    assert err.value.error_type == error_type and error_type in ERROR_TYPES
    assert len(seen) == 0  # nothing published: a replay grades the request again

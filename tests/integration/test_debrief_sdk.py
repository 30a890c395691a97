"""The debrief grader through the real Anthropic SDK against the local fake Messages API:
tool use, legacy tool rejection, repair round-trip, 429/529 handling (no broker needed)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agents.debrief.grader import DebriefGrader
from agents.providers.factory import make_provider
from agents.settings import Settings
from schemas.medkit import TOOL_NAME, CaseEvaluation, DebriefRequest
from streams.errors import BadRecord
from tests.unit.agents.debrief.support import attending, good_payload, sample
from tools.fakes.fake_anthropic import FakeAnthropic, Reply


@pytest.fixture()
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """The tool path: the Models API says the model has no structured outputs."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    with FakeAnthropic(responder=attending) as f:
        f.models["claude-sonnet-5-5"].info["capabilities"]["structured_outputs"][
            "supported"] = False
        yield f


@pytest.fixture()
def structured(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    """The structured-outputs path (what the Models API serves for Sonnet 5.5)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
    with FakeAnthropic(responder=attending) as f:
        yield f


async def test_structured_outputs_where_the_model_supports_them(
        structured: FakeAnthropic) -> None:
    ev = await _evaluate(structured, sample("req-cp-001"))
    assert ev.global_rating.verdict == "excellent" and ev.validation == ()
    [sent] = structured.message_requests()
    fmt = sent.body["output_config"]["format"]
    assert fmt["type"] == "json_schema" and fmt["schema"]["additionalProperties"] is False
    assert "tools" not in sent.body and "tool_choice" not in sent.body
    assert TOOL_NAME not in sent.body["system"][-1]["text"].split("Answer with")[-1]


async def test_a_structured_answer_that_fails_our_checks_gets_one_repair_turn(
        structured: FakeAnthropic) -> None:
    request = sample("req-cp-001")
    bad = good_payload(request)
    bad["case_id"] = "another-case"
    structured.enqueue(Reply.message(text=json.dumps(bad)))
    ev = await _evaluate(structured, request)
    assert [p.type for p in ev.validation] == ["repair_round_trip"]
    first, second = structured.message_requests()
    assert second.body["output_config"] == first.body["output_config"]
    turn = second.body["messages"][1]["content"]
    assert [b["type"] for b in turn] == ["thinking", "text"]  # passed back unmodified
    assert "cannot be used" in second.body["messages"][2]["content"][0]["text"]


async def test_a_schema_the_api_would_refuse_is_refused_by_the_fake(
        structured: FakeAnthropic) -> None:
    from agents.debrief import prompt

    schema = json.loads(json.dumps(prompt.TOOL["input_schema"]))
    schema["properties"]["case_id"]["maxLength"] = 64  # a keyword the docs list as unsupported
    body = {"model": "claude-sonnet-5-5", "max_tokens": 100,
            "messages": [{"role": "user", "content": "x"}],
            "output_config": {"format": {"type": "json_schema", "schema": schema}}}
    from tools.fakes import fake_rules

    entry = structured.model("claude-sonnet-5-5")
    assert entry is not None
    refused = fake_rules.validate(body, entry, structured.state)
    assert refused is not None and "maxLength" in refused.body["error"]["message"]


def _settings(**llm: Any) -> Settings:
    base = {"provider": "anthropic", "model": "claude-sonnet-5-5", "sdk_max_retries": 0,
            "deadline_seconds": 10.0, "max_attempts": 3, "backoff_base_seconds": 0.01,
            "requests_per_minute": 6000}
    return Settings(llm={**base, **llm})


async def _evaluate(fake: FakeAnthropic, request: DebriefRequest, **llm: Any) -> CaseEvaluation:
    settings = _settings(**llm)
    provider = make_provider(settings, base_url=fake.base_url)
    try:
        return await DebriefGrader(settings, provider).evaluate(request)
    finally:
        await provider.aclose()  # type: ignore[attr-defined]


def _tool(payload: dict[str, Any], name: str = TOOL_NAME) -> Reply:
    return Reply.message(tool_use={"name": name, "input": payload})


async def test_a_good_evaluation_with_a_strict_tool_and_auto_tool_choice(
        fake: FakeAnthropic) -> None:
    ev = await _evaluate(fake, sample("req-cp-001"))
    assert ev.global_rating.verdict == "excellent" and ev.safety_breach is None
    assert ev.usage.input_tokens == 2400 and ev.usage.cost_usd > 0
    [sent] = fake.message_requests()
    body = sent.body
    assert body["tool_choice"] == {"type": "auto"}
    assert [t["name"] for t in body["tools"]] == [TOOL_NAME]
    assert body["tools"][0]["strict"] is True
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert "render_case_grade" not in json.dumps(body)


async def test_unknown_citation_is_dropped_and_wrong_bands_corrected(
        fake: FakeAnthropic) -> None:
    req = sample("req-sep-001")
    payload = good_payload(req)
    payload["criteria"][2]["guideline_ref"] = "SSC-INVENTED-9"
    payload["global_rating"] = {"score": 0.56, "verdict": "good"}
    fake.enqueue(_tool(payload))
    ev = await _evaluate(fake, req)
    assert [(d.criterion_id, d.reason) for d in ev.dropped_criteria] == [
        (payload["criteria"][2]["criterion_id"], "unknown_citation")]
    # the model's verdict disagreed with its own claimed score: recorded
    assert [(c.scope, c.model_verdict, c.verdict) for c in ev.corrections] == [
        ("global", "good", "satisfactory")]
    # the published rating is recomputed from the kept criteria; the claim is kept beside it
    kept = [c for c in payload["criteria"] if c["guideline_ref"] != "SSC-INVENTED-9"]
    assert ev.claimed_global_rating is not None and ev.claimed_global_rating.score == 0.56
    assert ev.global_rating.score != 0.56 and len(ev.criteria) == len(kept)
    assert [f.scope for f in ev.score_flags] == ["global"]


async def test_a_safety_breach_leads_the_narrative_whatever_the_score(
        fake: FakeAnthropic) -> None:
    req = sample("req-pf-003")
    payload = good_payload(req) | {"safety_breach": None, "narrative": "Great job overall.",
                                   "global_rating": {"score": 0.9, "verdict": "excellent"}}
    fake.enqueue(_tool(payload))
    ev = await _evaluate(fake, req)
    assert ev.safety_breach is not None and ev.safety_breach.kind == "contraindicated_drug"
    assert ev.narrative.startswith("Safety breach: aspirin")
    assert ev.global_rating.verdict == "excellent"


async def test_legacy_tool_is_rejected_then_repaired(fake: FakeAnthropic) -> None:
    fake.enqueue(_tool({"case_id": "chest-pain-stemi", "score": 88}, name="render_case_grade"))
    ev = await _evaluate(fake, sample("req-cp-001"))
    _, second = fake.message_requests()
    reply = second.body["messages"][-1]["content"]
    assert reply[0]["type"] == "tool_result" and reply[0]["is_error"] is True
    turn = second.body["messages"][1]["content"]
    assert [b["type"] for b in turn] == ["thinking", "tool_use"]  # passed back unmodified
    assert turn[1]["name"] == "render_case_grade"
    assert ev.usage.llm_calls == 2


async def test_legacy_tool_twice_is_dead_lettered(fake: FakeAnthropic) -> None:
    legacy = _tool({"score": 88}, name="render_case_grade")
    fake.enqueue(legacy, legacy)
    with pytest.raises(BadRecord) as err:
        await _evaluate(fake, sample("req-cp-001"))
    assert err.value.error_type == "invalid_output"


async def test_no_tool_call_then_repair_then_success(fake: FakeAnthropic) -> None:
    fake.enqueue(Reply.message(text="The trainee did well overall."))
    ev = await _evaluate(fake, sample("req-sep-002"))
    assert ev.safety_breach is not None and len(fake.message_requests()) == 2


async def test_no_tool_call_twice_is_dead_lettered(fake: FakeAnthropic) -> None:
    fake.enqueue(Reply.message(text="prose"), Reply.message(text="more prose"))
    with pytest.raises(BadRecord, match="no render_case_evaluation tool call"):
        await _evaluate(fake, sample("req-sep-002"))


@pytest.mark.parametrize("status", [429, 529])
async def test_rate_limit_and_overload_are_retried_within_the_deadline(
        fake: FakeAnthropic, status: int) -> None:
    fake.enqueue(Reply.error(status, retry_after=0.2))
    ev = await _evaluate(fake, sample("req-pf-001"))
    assert ev.global_rating.verdict == "excellent"
    assert len(fake.message_requests()) == 2


async def test_persistent_overload_is_dead_lettered_after_bounded_retries(
        fake: FakeAnthropic) -> None:
    fake.enqueue(*[Reply.error(529) for _ in range(5)])
    with pytest.raises(BadRecord) as err:
        await _evaluate(fake, sample("req-pf-001"), max_attempts=2)
    assert err.value.error_type == "llm_failure" and "overloaded" in err.value.message
    assert len(fake.message_requests()) == 2

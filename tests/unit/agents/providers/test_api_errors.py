"""What the real API sends, through the real SDK: error kinds, the spend-limit stop, the
thinking blocks kept verbatim, the start-up model check and the cache-prefix report."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from datetime import date

import pytest
from prometheus_client import generate_latest

from agents.errors import AgentsError, LLMError
from agents.providers.anthropic import AnthropicProvider
from agents.providers.base import LLMRequest, SystemBlock, TokenUsage
from agents.providers.factory import cost_usd
from agents.providers.settings import LLMSettings
from agents.providers.startup import Origin, check_model, check_provider, report_cache_prefixes
from streams.metrics import Metrics
from tests.helpers import own_records
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

REQUEST = LLMRequest(system=(SystemBlock("rules", cache=True),),
                     messages=({"role": "user", "content": "the case"},), max_tokens=300)


def llm(**over: object) -> LLMSettings:
    base: dict[str, object] = {"provider": "anthropic", "deadline_seconds": 5.0,
                               "max_attempts": 3, "backoff_base_seconds": 0.01,
                               "requests_per_minute": 6000, "check_cache_prefixes": False}
    return LLMSettings(**{**base, **over})


_made: list[AnthropicProvider] = []


@pytest.fixture(autouse=True)
async def _close_providers() -> AsyncIterator[None]:
    """Close every SDK client in the test's own loop: one the garbage collector closes later,
    in a closed loop, logs an asyncio ERROR into whichever test runs then."""
    yield
    while _made:
        await _made.pop().aclose()


def provider(fake: FakeAnthropic, **over: object) -> AnthropicProvider:
    p = AnthropicProvider(llm(**over), base_url=fake.base_url)
    _made.append(p)
    return p


@pytest.mark.parametrize(("reply", "kind", "retryable"), [
    # the cause is the SDK's error_code (error.details.error_code), never the message text
    (Reply.spend_limit(), "spend_limit", False),
    (Reply.spend_limit("contract_spend_limit_reached"), "spend_limit", False),
    (Reply.error(429, message="Your monthly spend limit has been reached"), "rate_limited",
     True),
    (Reply.error(429, message="m", error_code="some_future_code"), "rate_limited", True),
    (Reply.ramp_limit(), "ramp_limited", True),
    (Reply.error(402, message="credit balance too low"), "billing", False),
    (Reply.error(413, message="request exceeds the maximum size"), "request_too_large", False),
    # no error_code names a prompt over the context window: its message decides nothing
    (Reply.error(400, message="prompt is too long: model_context_window_exceeded"),
     "bad_request", False),
    (Reply.error(404, error_type="not_found_error"), "not_found", False),
    (Reply.error(504, retry_after=0.01), "server_error", True),
    (Reply.error(429, retry_after=0.01), "rate_limited", True),
    (Reply.error(409, message="lock timeout", error_type="conflict_error"), "conflict", True),
    # the server's x-should-retry decides, whatever the status (the SDK's rule)
    (Reply(500, {"type": "error", "error": {"type": "api_error", "message": "m"}},
           {"x-should-retry": "false"}), "server_error", False),
    (Reply(400, {"type": "error", "error": {"type": "invalid_request_error",
                                            "message": "m"}}, {"x-should-retry": "true"}),
     "bad_request", True),
    (Reply(409, {"type": "error", "error": {"type": "conflict_error", "message": "m"}},
           {"x-should-retry": "false"}), "conflict", False),
    # a halting error stays halting, whatever the header says
    (Reply(402, {"type": "error", "error": {"type": "billing_error", "message": "m"}},
           {"x-should-retry": "true"}), "billing", False),
])
async def test_error_kinds(fake: FakeAnthropic, reply: Reply, kind: str,
                           retryable: bool) -> None:
    fake.enqueue(reply)
    fake.responder = lambda body: Reply.error(500, message="still failing")
    with pytest.raises(LLMError) as err:
        await provider(fake, max_attempts=1).complete(REQUEST)
    assert (err.value.kind, err.value.retryable) == (kind, retryable)


async def test_a_spend_limit_halts_without_retries_until_an_answer_clears_it(
        fake: FakeAnthropic, caplog: pytest.LogCaptureFixture) -> None:
    """No retry storm: each call is one request; the worker's breaker (not the provider)
    stops new work, and its probe's answer resumes everything (gauge back to 0)."""
    metrics = Metrics.create()
    p = provider(fake)
    await check_provider(p, p.settings, metrics)
    fake.enqueue(Reply.spend_limit(), Reply.spend_limit())
    for _ in range(2):
        with pytest.raises(LLMError) as err:
            await p.complete(REQUEST)
        assert err.value.kind == "spend_limit" and not err.value.retryable
    assert len(fake.message_requests()) == 2  # one request per call, never retried
    assert sum(r.levelno == logging.ERROR and r.name == "agents.providers.anthropic"
               for r in caplog.records) == 1  # logged once per halt
    halted = 'judgeflow_llm_halted{provider="anthropic",reason="spend_limit"}'
    assert f"{halted} 1.0" in generate_latest(metrics.registry).decode()
    assert p.halted is not None
    await p.complete(REQUEST)  # the limit was raised: the probe is answered
    assert p.halted is None
    assert f"{halted} 0.0" in generate_latest(metrics.registry).decode()


async def test_a_contract_spend_limit_without_telling_words_halts_too(
        fake: FakeAnthropic, caplog: pytest.LogCaptureFixture) -> None:
    """The message says nothing about spending: only error.details.error_code does."""
    metrics = Metrics.create()
    p = provider(fake)
    await check_provider(p, p.settings, metrics)
    fake.enqueue(Reply.spend_limit("contract_spend_limit_reached", message="Not allowed."))
    with pytest.raises(LLMError) as err:
        await p.complete(REQUEST)
    assert err.value.kind == "spend_limit" and "contract_spend_limit_reached" in str(err.value)
    # the fake's body is the real shape: the SDK itself picks its class from the code
    assert type(err.value.__cause__).__name__ == "ContractSpendLimitReachedError"
    assert len(fake.message_requests()) == 1
    [line] = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert "spend_limit" in line and "contract_spend_limit_reached" in line
    halted = 'judgeflow_llm_halted{provider="anthropic",reason="spend_limit"}'
    assert f"{halted} 1.0" in generate_latest(metrics.registry).decode()


async def test_a_ramp_limit_backs_off_and_is_answered(fake: FakeAnthropic) -> None:
    fake.enqueue(Reply.ramp_limit(retry_after=0.05), Reply.message(text="ok"))
    p = provider(fake)
    resp = await p.complete(REQUEST)
    assert resp.attempts == 2 and p.halted is None
    first, second = fake.message_requests()
    assert second.at - first.at >= 0.05  # waited out the retry-after before the retry


async def test_thinking_blocks_are_kept_verbatim(fake: FakeAnthropic) -> None:
    fake.enqueue(Reply.message(tool_use={"name": "t", "input": {"a": 1}}))
    resp = await provider(fake).complete(REQUEST)
    kinds = [b["type"] for b in resp.content]
    assert kinds == ["thinking", "tool_use"] and resp.content[0]["signature"]
    assert resp.assistant_turn() == {"role": "assistant", "content": list(resp.content)}


async def test_409_and_x_should_retry_true_are_retried(fake: FakeAnthropic) -> None:
    fake.enqueue(Reply.error(409, message="lock timeout"),
                 Reply(400, {"type": "error", "error": {"type": "invalid_request_error",
                                                        "message": "m"}},
                       {"x-should-retry": "true"}),
                 Reply.message(text="ok"))
    resp = await provider(fake).complete(REQUEST)
    assert resp.attempts == 3 and len(fake.message_requests()) == 3


async def test_x_should_retry_false_stops_a_5xx_at_once(fake: FakeAnthropic) -> None:
    fake.enqueue(Reply(503, {"type": "error", "error": {"type": "api_error", "message": "m"}},
                       {"x-should-retry": "false"}))
    with pytest.raises(LLMError) as err:
        await provider(fake).complete(REQUEST)
    assert not err.value.retryable and len(fake.message_requests()) == 1


async def test_the_sdk_does_not_retry_by_itself(fake: FakeAnthropic) -> None:
    fake.enqueue(Reply.error(529, retry_after=0.01), Reply.message(text="ok"))
    resp = await provider(fake).complete(REQUEST)
    assert resp.attempts == 2 and len(fake.message_requests()) == 2


@pytest.mark.parametrize(("model", "error"), [
    ("claude-sonnet-4-5", "retired on 2026-11-30"),
    ("claude-nope-1", "not in the model catalogue"),
])
async def test_start_up_refuses_unknown_and_retired_models(fake: FakeAnthropic, model: str,
                                                           error: str) -> None:
    p = provider(fake)
    p.model = model
    with pytest.raises(AgentsError, match=error):
        await check_model(p, p.settings)


@pytest.mark.parametrize("model", ["claude-fable-5-2", "claude-mythos-5-2"])
async def test_the_5_2_models_start_and_are_priced_as_themselves(
        fake: FakeAnthropic, model: str) -> None:
    p = provider(fake, model=model)
    await check_model(p, p.settings)  # Mythos 5.2 used to stop the worker: not catalogued
    resp = await p.complete(REQUEST)
    assert resp.model == model
    usage = TokenUsage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert cost_usd(usage, resp.model, p.settings) == pytest.approx(8.0 + 40.0)


async def test_start_up_refuses_a_model_the_api_does_not_know(fake: FakeAnthropic) -> None:
    fake.models.pop("claude-opus-5-5")
    p = provider(fake, model="claude-opus-5-5")
    with pytest.raises(AgentsError, match="unknown to the Models API"):
        await check_model(p, p.settings)


async def test_retired_is_decided_by_the_models_api_and_names_a_replacement(
        fake: FakeAnthropic) -> None:
    fake.models["claude-opus-4-5"].info["lifecycle"] = "retired"
    p = provider(fake, model="claude-opus-4-5")
    with pytest.raises(AgentsError) as err:
        await check_model(p, p.settings, today=date(2026, 12, 1))  # before retires_at
    line = str(err.value)
    assert "'claude-opus-4-5' is retired" in line and "claude-opus-5-5" in line
    assert "\n" not in line and fake.message_requests() == []


async def test_a_past_retirement_date_on_a_deprecated_model_is_overdue_not_retired(
        fake: FakeAnthropic, caplog: pytest.LogCaptureFixture) -> None:
    p = provider(fake, model="claude-opus-4-5")
    await check_model(p, p.settings, today=date(2027, 3, 1))  # after retires_at 2027-01-22
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("overdue" in w and "2027-01-22" in w and "claude-opus-5-5" in w
               for w in warned)
    assert p.facts is not None and p.facts.lifecycle == "deprecated"


async def test_capabilities_come_from_the_models_api(fake: FakeAnthropic,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    effort = fake.models["claude-sonnet-5-5"].info["capabilities"]["effort"]
    effort["xhigh"]["supported"] = False
    p = provider(fake, model="claude-sonnet-5-5")
    with pytest.raises(AgentsError, match="the Models API lists: low, medium, high"):
        await check_model(p, llm(model="claude-sonnet-5-5", effort="xhigh"))
    fake.models["claude-sonnet-5-5"].info["capabilities"]["batch"]["supported"] = False
    await check_model(p, p.settings)
    assert p.facts is not None and not p.facts.batch
    assert any("catalogue prices batches" in r.getMessage() for r in caplog.records)


async def test_the_provider_asks_the_models_api_once_before_its_first_call(
        fake: FakeAnthropic) -> None:
    fake.models["claude-sonnet-5-5"].info["capabilities"]["structured_outputs"][
        "supported"] = False
    p = provider(fake)
    schema = {"type": "object", "properties": {}, "additionalProperties": False}
    asking = LLMRequest(system=REQUEST.system, messages=REQUEST.messages, output_schema=schema)
    for _ in range(2):
        await p.complete(asking)
    looked_up = [r for r in fake.requests if r.path.startswith("/v1/models/")]
    assert len(looked_up) == 1
    assert all("output_config" not in r.body for r in fake.message_requests())
    await p.aclose()


async def test_cache_diagnostics_chain_requests_of_one_prefix(
        fake: FakeAnthropic, caplog: pytest.LogCaptureFixture) -> None:
    p = provider(fake)
    other_case = LLMRequest(system=REQUEST.system,
                            messages=({"role": "user", "content": "another case"},))
    await p.complete(REQUEST)
    await p.complete(other_case)
    sent = [r.body["diagnostics"] for r in fake.message_requests()]
    first_id = p.cache_log.previous(p.cache_log.key(REQUEST) or "")
    assert sent[0] == {"previous_message_id": None} and sent[1]["previous_message_id"]
    assert first_id is not None and p.cache_log.reasons == ["messages_changed"]
    assert not [r for r in own_records(caplog.records) if r.levelno >= logging.WARNING]
    # a prefix that broke (the model changed under the same prefix key) is a warning
    p.model = "claude-opus-5-5"
    await p.complete(REQUEST)
    assert p.cache_log.reasons[-1] == "model_changed"
    assert any("model_changed" in r.getMessage() for r in caplog.records
               if r.levelno == logging.WARNING)
    assert "rules" not in " ".join(r.getMessage() for r in caplog.records)  # no prompt text
    await p.aclose()


async def test_a_matched_prefix_that_never_caches_says_the_minimum_is_too_low(
        fake: FakeAnthropic, caplog: pytest.LogCaptureFixture) -> None:
    fake.models["claude-sonnet-5-5"].min_cache_tokens = 100_000  # the real minimum is higher
    p = provider(fake, check_cache_prefixes=True)
    big = LLMRequest(system=(SystemBlock("clinical rules " * 700, cache=True),),
                     messages=REQUEST.messages)
    for _ in range(2):
        await p.complete(big)
        await asyncio.gather(*p._background)
    assert any("minimum cacheable prefix is probably above the catalogue's 2048"
               in r.getMessage() for r in caplog.records)
    await p.aclose()


async def test_start_up_warns_about_a_deprecated_model(
        fake: FakeAnthropic, caplog: pytest.LogCaptureFixture) -> None:
    p = provider(fake, model="claude-opus-4-5")
    await check_model(p, p.settings, today=date(2026, 12, 1))
    assert any(r.levelno == logging.WARNING and "retires on 2027-01-22" in r.getMessage()
               for r in caplog.records)
    with pytest.raises(AgentsError, match="effort 'xhigh' is not accepted"):
        await check_model(p, llm(model="claude-opus-4-5", effort="xhigh"))


async def test_each_cache_breakpoint_is_reported_against_the_model_minimum(
        fake: FakeAnthropic) -> None:
    small, big = SystemBlock("rules " * 20, cache=True), SystemBlock("x" * 8000, cache=True)
    request = LLMRequest(system=(small, SystemBlock("uncached"), big), messages=())
    reports = await report_cache_prefixes(provider(fake), request)
    assert [(r.breakpoint, r.caches) for r in reports] == [(1, False), (3, True)]
    assert all(r.minimum == 2048 for r in reports)
    counted = [r for r in fake.requests if r.path.endswith("/count_tokens")]
    assert len(counted) == 2 and fake.message_requests() == []


async def test_the_provider_counts_each_distinct_prefix_once(
        fake: FakeAnthropic, caplog: pytest.LogCaptureFixture) -> None:
    p = provider(fake, check_cache_prefixes=True)
    other = LLMRequest(system=(SystemBlock("other rules", cache=True),), messages=REQUEST.messages)
    for request in (REQUEST, REQUEST, other, REQUEST):
        await p.complete(request)
        await asyncio.gather(*p._background)
    counted = [r for r in fake.requests if r.path.endswith("/count_tokens")]
    assert len(counted) == 2 and len(fake.message_requests()) == 4
    assert sum("will NOT cache it" in r.getMessage() for r in caplog.records) == 2
    await p.aclose()


async def test_an_unreachable_models_api_means_no_structured_outputs(
        fake: FakeAnthropic, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # the Models API cannot be reached at start (nor later): the model may lack structured
    # outputs, and output_config.format on such a model is a permanent 400 -- so none is
    # sent (as the warning says), and the request is one every model accepts
    fake.models["claude-haiku-4-5"].info["capabilities"]["structured_outputs"] = {
        "supported": False}
    p = provider(fake, model="claude-haiku-4-5")

    async def unreachable() -> None:
        raise LLMError("server_error", "Models API down", retryable=True)

    monkeypatch.setattr(p, "retrieve_model", unreachable)
    await check_model(p, p.settings)
    assert any("without structured outputs" in r.getMessage() for r in caplog.records)
    schema = {"type": "object", "properties": {}, "additionalProperties": False}
    resp = await p.complete(LLMRequest(system=(SystemBlock("rules"),),
                                       messages=({"role": "user", "content": "x"},),
                                       max_tokens=300, output_schema=schema))
    await p.aclose()
    [sent] = fake.message_requests()
    assert "format" not in (sent.body.get("output_config") or {})
    assert resp.stop_reason == "end_turn"


async def test_start_up_errors_name_the_setting_the_model_came_from(
        fake: FakeAnthropic) -> None:
    # a per-criterion override is fixed in its own entry: "set JUDGEFLOW_LLM__MODEL=..."
    # would leave the retired model where it is
    over = Origin(model='JUDGEFLOW_LLM__CRITERION_MODELS["ckd_stage"].model',
                  effort='JUDGEFLOW_LLM__CRITERION_MODELS["ckd_stage"].effort')
    p = provider(fake, model="claude-sonnet-4-5")
    with pytest.raises(AgentsError) as err:
        await check_model(p, p.settings, origin=over)
    assert str(err.value) == (
        "model 'claude-sonnet-4-5' (JUDGEFLOW_LLM__CRITERION_MODELS[\"ckd_stage\"].model) is "
        "retired on 2026-11-30; set JUDGEFLOW_LLM__CRITERION_MODELS[\"ckd_stage\"].model to "
        "e.g. claude-sonnet-5-5")
    with pytest.raises(AgentsError, match=r"; set e\.g\. JUDGEFLOW_LLM__MODEL=claude-sonnet-5-5$"):
        await check_model(p, p.settings)
    await p.aclose()
    haiku = provider(fake, model="claude-haiku-4-5")
    with pytest.raises(AgentsError, match=r'^JUDGEFLOW_LLM__CRITERION_MODELS\["ckd_stage"\]'
                       r"\.effort 'max' is not accepted by claude-haiku-4-5"):
        await check_model(haiku, llm(model="claude-haiku-4-5", effort="max"), origin=over)
    await haiku.aclose()

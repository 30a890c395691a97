"""The batch methods of the provider seam against the fake batches API (the real SDK runs):
same validation as live requests, results as LLMResponses marked ``batch``, partial
failures reported by kind."""

from __future__ import annotations

import pytest

from agents.errors import LLMError
from agents.providers.anthropic import AnthropicProvider
from agents.providers.base import LLMRequest, SystemBlock
from agents.providers.settings import LLMSettings
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

LLM = LLMSettings(provider="anthropic", model="claude-sonnet-5-5", deadline_seconds=10)


def _req(text: str) -> LLMRequest:
    return LLMRequest(system=(SystemBlock("You judge."),),
                      messages=({"role": "user", "content": text},))


async def test_submit_poll_and_collect_with_partial_failures() -> None:
    with FakeAnthropic(responder=lambda body: Reply.message(text="fine")) as fake:
        fake.batches.polls = 2
        fake.batches.outcomes = {"c-2": ["expired"]}
        p = AnthropicProvider(LLM, base_url=fake.base_url, api_key="test")
        bad = LLMRequest(system=tuple(SystemBlock(f"part {i}", cache=True) for i in range(5)),
                         messages=({"role": "user", "content": "x"},))  # > 4 breakpoints
        bid = await p.submit_batch([("c-1", _req("a")), ("c-2", _req("b")), ("c-3", bad)])
        states = [(await p.batch_status(bid)).processing_status for _ in range(4)]
        assert states == ["in_progress", "in_progress", "ended", "ended"]
        got = {r.custom_id: r for r in await p.batch_results(bid)}
        await p.aclose()
    assert got["c-1"].kind == "succeeded" and got["c-1"].response is not None
    resp = got["c-1"].response
    assert resp.batch and resp.text == "fine" and resp.usage.output_tokens > 0
    assert got["c-2"].kind == "expired" and got["c-2"].response is None
    assert got["c-3"].kind == "errored" and got["c-3"].error == "invalid_request_error"
    assert fake.batches.succeeded == ["c-1"] and not fake.message_requests()


async def test_bad_custom_ids_are_a_client_error() -> None:
    with FakeAnthropic() as fake:
        p = AnthropicProvider(LLM, base_url=fake.base_url, api_key="test")
        with pytest.raises(LLMError) as err:
            await p.submit_batch([("same", _req("a")), ("same", _req("b"))])
        await p.aclose()
    assert not err.value.retryable

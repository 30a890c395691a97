"""The batch methods of the provider seam against the fake batches API (the real SDK runs):
same validation as live requests, results as LLMResponses marked ``batch``, partial
failures reported by kind."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from agents.errors import LLMError
from agents.providers import anthropic_batch, batch_limits
from agents.providers.anthropic import AnthropicProvider
from agents.providers.anthropic_batch import chunk
from agents.providers.anthropic_errors import classify
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
        [(bid, ids)] = await p.submit_batch([("c-1", _req("a")), ("c-2", _req("b")),
                                             ("c-3", bad)])
        assert ids == ["c-1", "c-2", "c-3"]
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


def _r(cid: str, size: int) -> dict[str, object]:
    return {"custom_id": cid, "params": {"x": "y" * size}}


def test_chunks_stay_within_the_request_and_byte_limits() -> None:
    reqs = [_r(f"c{i}", 10) for i in range(7)]
    assert [len(c) for c in chunk(reqs, max_requests=3)] == [3, 3, 1]
    one = len('{"custom_id":"c0","params":{"x":"yyyyyyyyyy"}}') + 1
    limit = len('{"requests":[]}') + 2 * one
    parts = chunk(reqs, max_bytes=limit)
    assert [len(c) for c in parts] == [2, 2, 2, 1]
    assert [r["custom_id"] for c in parts for r in c] == [r["custom_id"] for r in reqs]
    assert chunk([_r("big", 500), _r("small", 1)], max_bytes=100) == [[_r("big", 500)],
                                                                      [_r("small", 1)]]
    assert chunk([]) == []


async def refused(p: AnthropicProvider, requests: list[dict[str, Any]]) -> LLMError:
    """One create call with ``requests`` as they are (no chunking): the error it gets."""
    try:
        await p.client.messages.batches.create(requests=requests)  # type: ignore[arg-type]
    except Exception as exc:
        return classify(exc)
    raise AssertionError("the batch was accepted")


async def test_a_submission_over_the_limit_becomes_several_batches(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch_limits, "MAX_REQUESTS", 2)  # the chunker's and the fake's
    with FakeAnthropic(responder=lambda body: Reply.message(text="fine")) as fake:
        p = AnthropicProvider(LLM, base_url=fake.base_url, api_key="test")
        submitted = await p.submit_batch([(f"c-{i}", _req(str(i))) for i in range(5)])
        assert [ids for _, ids in submitted] == [["c-0", "c-1"], ["c-2", "c-3"], ["c-4"]]
        # what the API answers to an oversized batch (sent past the chunker)
        err = await refused(p, [{"custom_id": f"d-{i}", "params": p.params(_req(str(i)))}
                                for i in range(3)])
        await p.aclose()
    assert err.kind == "bad_request" and "at most 2 requests" in err.message


async def test_the_byte_limit_splits_batches_the_fake_accepts_and_refuses_one_over_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # one seam lowers the limit for the chunker and the fake alike (the real one: 256 MB)
    monkeypatch.setattr(batch_limits, "MAX_BYTES", 64 * 1024)
    note = "Notiz über Ödeme " * 300  # ~5 KB, non-ASCII: the limit counts UTF-8 bytes
    items = [(f"c-{i}", _req(f"{i} {note}")) for i in range(30)]  # ~160 KB in all
    with FakeAnthropic(responder=lambda body: Reply.message(text="fine")) as fake:
        p = AnthropicProvider(LLM, base_url=fake.base_url, api_key="test")
        whole = [{"custom_id": cid, "params": p.params(r)} for cid, r in items]
        assert anthropic_batch.body_bytes({"requests": whole}) > 2 * 64 * 1024
        err = await refused(p, whole)  # (a) the API's answer to one oversized body
        submitted = await p.submit_batch(items)  # (b) chunked: every batch accepted
        for bid, _ in submitted:
            assert (await p.batch_status(bid)).ended
        answered = [r for bid, _ in submitted for r in await p.batch_results(bid)]
        sizes = [len(fake.requests[i].body["requests"]) for i in range(len(fake.requests))
                 if fake.requests[i].path == "/v1/messages/batches"]
        await p.aclose()
    assert err.kind == "request_too_large" and not err.retryable
    assert batch_limits.TOO_LARGE_MESSAGE in err.message
    assert len(submitted) >= 3 and sizes[1:] == [len(ids) for _, ids in submitted]
    assert [c for _, ids in submitted for c in ids] == [cid for cid, _ in items]
    assert sorted(r.custom_id for r in answered if r.kind == "succeeded") == \
        sorted(cid for cid, _ in items)
    assert len(fake.batches.batches) == len(submitted)  # the oversized one was not created


async def test_expiry_and_the_results_window_follow_the_fake_clock() -> None:
    with FakeAnthropic(responder=lambda body: Reply.message(text="fine")) as fake:
        start = datetime.now(UTC)
        fake.batches.hold = True  # still processing...
        p = AnthropicProvider(LLM, base_url=fake.base_url, api_key="test")
        [(bid, _)] = await p.submit_batch([("c-1", _req("a"))])
        assert not (await p.batch_status(bid)).ended
        fake.batches.now = lambda: start + timedelta(hours=24, seconds=1)
        state = await p.batch_status(bid)
        assert state.ended and state.counts["expired"] == 1 and not state.results_gone()
        [r] = await p.batch_results(bid)
        assert r.kind == "expired"
        fake.batches.now = lambda: start + timedelta(days=29, seconds=1)
        state = await p.batch_status(bid)
        assert state.archived and state.results_gone()
        with pytest.raises(LLMError) as err:
            await p.batch_results(bid)
        await p.aclose()
    assert err.value.kind == "not_found"

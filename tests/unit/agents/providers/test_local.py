"""Models that stay inside: the local provider through the real SDK against stand-ins of
vLLM, Ollama and llama.cpp that accept, ignore and refuse what their docs say; the model is
declared (no catalogue, no Models API), priced at zero or the operator's price, no Claude
key ever travels, and `llm check` and the replay estimate work with it."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from agents.errors import AgentsError, LLMError
from agents.providers.base import LLMRequest, SystemBlock, TokenUsage
from agents.providers.factory import cost_usd, make_provider
from agents.providers.settings import LLMSettings
from agents.providers.startup import check_provider
from agents.replay.estimate import Estimator
from agents.settings import Settings
from cli.main import main
from streams.metrics import Metrics
from tools.fakes.fake_local import FakeLocal

MODEL = "qwen3-8b"
SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"],
          "additionalProperties": False}
REQUEST = LLMRequest(system=(SystemBlock("You triage one cell.", cache=True),),
                     messages=({"role": "user", "content": "the case"},), max_tokens=256,
                     tools=({"name": "grade", "input_schema": SCHEMA},),
                     output_schema=SCHEMA)
KINDS = ("vllm", "ollama", "llamacpp")
_made: list[Any] = []


def llm(fake: FakeLocal, **over: Any) -> LLMSettings:
    base: dict[str, Any] = {"provider": "local", "model": MODEL, "server": fake.kind,
                            "base_url": fake.base_url, "requests_per_minute": 6000,
                            "max_attempts": 1, "effort": "high"}
    return LLMSettings(**{**base, **over})


def provider(fake: FakeLocal, **over: Any) -> Any:
    p = make_provider(Settings(llm=llm(fake, **over)))
    _made.append(p)
    return p


@pytest.fixture(autouse=True)
async def _close() -> AsyncIterator[None]:
    yield
    while _made:
        await _made.pop().aclose()


@pytest.fixture(params=KINDS)
def fake(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
         ) -> Iterator[FakeLocal]:
    # a Claude key in the environment must never reach a server inside the hospital
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-must-not-leave")
    with FakeLocal(request.param, model=MODEL) as f:
        yield f


async def test_a_declared_model_answers_and_costs_nothing(fake: FakeLocal) -> None:
    p = provider(fake)
    await check_provider(p, p.settings, Metrics.create())  # no catalogue, no Models API
    resp = await p.complete(REQUEST)
    assert resp.model == MODEL and resp.text == "ok"
    assert cost_usd(resp.usage, resp.model, p.settings) == 0.0
    # one small request at start (count_tokens where the server has it), then the call
    probe = "/v1/messages" if fake.kind == "ollama" else "/v1/messages/count_tokens"
    assert [r.path for r in fake.requests] == [probe, "/v1/messages"]
    assert fake.requests[0].status == 200 and fake.requests[0].body["model"] == MODEL
    sent = fake.requests[-1]
    assert sent.status == 200 and sent.ignored == []  # nothing the server drops unread
    assert "authorization" not in sent.headers and "x-api-key" not in sent.headers
    for absent in ("output_config", "thinking", "diagnostics", "metadata"):
        assert absent not in sent.body, absent  # no effort, no format, no cache diagnosis
    assert "cache_control" not in json.dumps(sent.body)  # no prompt caching on these


async def test_no_cache_breakpoint_reaches_a_server_without_prompt_caching(
        fake: FakeLocal) -> None:
    """The judge's chart-tool loop marks its newest turn for the cache, in the messages:
    stripped there too, not only from the system blocks."""
    turn = {"role": "user", "content": [{"type": "text", "text": "the case",
                                         "cache_control": {"type": "ephemeral"}}]}
    p = provider(fake)
    await p.complete(LLMRequest(system=REQUEST.system, messages=(turn,), max_tokens=256))
    [sent] = fake.message_requests()
    assert "cache_control" not in json.dumps(sent.body)
    assert turn["content"][0]["cache_control"] == {"type": "ephemeral"}  # the request's own


async def test_the_servers_own_key_is_sent_only_when_configured(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-must-not-leave")
    with FakeLocal("vllm", model=MODEL, api_key="vllm-key-123") as fake:
        with pytest.raises(LLMError) as err:
            await provider(fake).complete(REQUEST)  # vllm serve --api-key: no key is a 401
        assert err.value.kind == "auth"
        resp = await provider(fake, local_api_key="vllm-key-123").complete(REQUEST)
        assert resp.text == "ok"
        assert fake.requests[-1].headers["authorization"] == "Bearer vllm-key-123"
        assert all("sk-ant" not in json.dumps(r.headers) for r in fake.requests)


async def test_a_wrong_model_name_is_the_servers_404(fake: FakeLocal) -> None:
    if fake.kind == "llamacpp":
        pytest.skip("llama-server answers as its one loaded model, whatever the name")
    with pytest.raises(LLMError) as err:
        await provider(fake, model="qwen3-32b").complete(REQUEST)
    assert err.value.kind == "not_found"


async def test_prices_come_from_the_operators_models_file(fake: FakeLocal,
                                                          tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    path.write_text(json.dumps({"models": [
        {"id": MODEL, "input": 0.5, "output": 1.0, "cache_write_5m": 0, "cache_write_1h": 0,
         "cache_read": 0, "min_cache_tokens": 0, "min_cache_confirmed": False,
         "source": "the hospital's GPU cost per token"}]}))
    p = provider(fake, models_file=path)
    usage = TokenUsage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert cost_usd(usage, MODEL, p.settings) == pytest.approx(1.5)
    # a local model under a Claude name is still the local model's price, not Claude's
    claude_named = llm(fake, model="claude-sonnet-5-5")
    assert cost_usd(usage, "claude-sonnet-5-5", claude_named) == 0.0


@pytest.mark.parametrize("kind", KINDS)
async def test_a_key_the_server_refuses_stops_the_worker_at_start(kind: str) -> None:
    with FakeLocal(kind, model=MODEL, api_key="server-key") as fake:
        if kind == "ollama":  # Ollama takes any key: nothing to refuse
            await check_provider(provider(fake), llm(fake))
            return
        with pytest.raises(AgentsError, match=r"^the local server \(.+\) refused our key "
                                              r"\(HTTP 401.*set JUDGEFLOW_LLM__LOCAL_API_KEY"):
            await check_provider(provider(fake), llm(fake))
        await check_provider(provider(fake, local_api_key="server-key"), llm(fake))


async def test_a_model_the_server_does_not_serve_stops_the_worker_at_start(
        fake: FakeLocal) -> None:
    p = provider(fake, model="qwen3-32b")
    if fake.kind == "llamacpp":  # one loaded model, whatever the name: nothing to refuse
        await check_provider(p, p.settings)
        return
    with pytest.raises(AgentsError, match=r"does not serve model 'qwen3-32b' \(HTTP 404.*\): "
                                          r"set JUDGEFLOW_LLM__MODEL to a model it serves, or "
                                          r"JUDGEFLOW_LLM__BASE_URL to the server's own address$"):
        await check_provider(p, p.settings)
    # asked with count_tokens, then (its 404 may be a missing route) with a one-token message
    assert [r.body["max_tokens"] for r in fake.message_requests()] == [1]


async def test_a_server_without_count_tokens_is_asked_with_a_message(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # an early vLLM release: /v1/messages only; its 404 for the route is not "no such model"
    with FakeLocal("vllm", model=MODEL) as fake:
        monkeypatch.setitem(fake.profile, "count_tokens", False)
        p = provider(fake)
        await check_provider(p, p.settings)
        assert [(r.path, r.status) for r in fake.requests] == [
            ("/v1/messages/count_tokens", 404), ("/v1/messages", 200)]


async def test_a_server_not_up_yet_is_a_warning_not_a_refusal(
        caplog: pytest.LogCaptureFixture) -> None:
    settings = LLMSettings(provider="local", model=MODEL, server="vllm",
                           base_url="http://127.0.0.1:1")
    p = make_provider(Settings(llm=settings))
    _made.append(p)
    with caplog.at_level(logging.WARNING, logger="agents.providers.anthropic_local"):
        await check_provider(p, settings)  # k8s may start the worker before the server
    [line] = [r.getMessage() for r in caplog.records
              if r.name == "agents.providers.anthropic_local"]
    assert "cannot check model qwen3-8b on vLLM" in line and "the calls retry" in line


@pytest.mark.parametrize(("over", "says"), [
    ({"base_url": "http://127.0.0.1:8000/v1"},
     "JUDGEFLOW_LLM__BASE_URL ends in /v1: give the server's address without it "
     "(http://127.0.0.1:8000)"),
    ({"base_url": "http://gpu.local/llm/v1/"}, "without it (http://gpu.local/llm)"),
    ({"model": " "}, "needs the model's name as the server knows it: set JUDGEFLOW_LLM__MODEL"),
])
def test_an_address_with_v1_or_an_empty_model_is_refused_before_any_call(
        over: dict[str, str], says: str) -> None:
    settings = {"provider": "local", "model": MODEL, "base_url": "http://127.0.0.1:8000",
                **over}
    with pytest.raises(AgentsError) as err:
        make_provider(Settings(llm=LLMSettings(**settings)))
    assert says in str(err.value) and "\n" not in str(err.value)


def test_no_address_is_one_line() -> None:
    with pytest.raises(AgentsError, match="needs the server's address: set "
                                          "JUDGEFLOW_LLM__BASE_URL"):
        make_provider(Settings(llm=LLMSettings(provider="local", model=MODEL)))


async def test_batches_are_refused_and_the_replay_estimate_is_zero(fake: FakeLocal) -> None:
    p = provider(fake)
    assert p.supports_batches is False
    with pytest.raises(LLMError, match="no Message Batches API"):
        await p.submit_batch([("c1", REQUEST)])
    est = Estimator(p, p.settings, 400, 0)
    for _ in range(3):
        await est.add(REQUEST)
    assert est.est.calls == 3 and est.est.input_tokens > 0 and est.est.usd == 0.0
    counted = [r for r in fake.requests if r.path.endswith("/count_tokens")]
    assert bool(counted) == (fake.kind != "ollama")  # Ollama has no count_tokens


def test_llm_check_works_with_a_local_server(fake: FakeLocal, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in (("PROVIDER", "local"), ("MODEL", MODEL), ("SERVER", fake.kind),
                        ("BASE_URL", fake.base_url)):
        monkeypatch.setenv(f"JUDGEFLOW_LLM__{name}", value)
    assert main(["llm", "check"]) == 0
    out = capsys.readouterr().out
    assert f"llm check: local model {MODEL} (declared) on " in out
    assert "no prompt caching" in out and "no Models API: the model is declared" in out
    for kind in ("judge", "debrief"):
        assert f"{kind}: call 1: model {MODEL}" in out
    assert out.count("cost $0.000000") == 2 and "cache breakpoint" not in out
    assert all(r.ignored == [] and r.status == 200 for r in fake.message_requests())

"""Models that stay inside: the judge worker on the real broker with ``llm.provider local``
against stand-ins of vLLM and Ollama (tools/fakes/fake_local.py): one ok result per job,
priced at $0, every request free of anything the server drops unread (no cache_control, no
tool_choice on Ollama, no output_config), and no Claude key sent although one is set."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agents.judge.run import serve
from streams.topics import ensure_topics
from tests.helpers import collect, produce, values
from tests.helpers import test_settings as make_settings
from tests.integration.test_judge_clouds import GOOD
from tests.unit.agents.judge.fixtures import disagreement, write_charts, write_skill
from tools.fakes.fake_local import FakeLocal

pytestmark = pytest.mark.integration
MODEL = "qwen3-8b"


@pytest.fixture(params=["vllm", "ollama"])
def server(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
           ) -> Iterator[FakeLocal]:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-must-not-leave")
    with FakeLocal(request.param, model=MODEL) as fake:
        fake.responder = lambda body: json.dumps(GOOD)
        yield fake


async def test_a_judge_worker_on_a_local_server(bootstrap: str, tmp_path: Path,
                                                server: FakeLocal) -> None:
    settings = make_settings(
        bootstrap, skill_dir=write_skill(tmp_path), charts_dir=write_charts(tmp_path),
        llm={"provider": "local", "server": server.kind, "base_url": server.base_url,
             "model": MODEL, "sdk_max_retries": 0, "deadline_seconds": 10.0,
             "requests_per_minute": 6000, "concurrency": 2, "max_attempts": 2})
    await ensure_topics(settings)
    jobs = [disagreement(job_id=f"job-local-{i}") for i in range(3)]
    await produce(bootstrap, settings.topics.judge_jobs,
                  [(j.key.encode(), j.model_dump_json().encode()) for j in jobs])
    stop = asyncio.Event()
    task = asyncio.create_task(serve(settings, stop=stop))
    try:
        results = values(await collect(bootstrap, settings.topics.judge_results, until=3,
                                       timeout=60, quiet=0.5))
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)
    assert sorted(r["job_id"] for r in results) == [j.job_id for j in jobs]
    for r in results:
        assert r["status"] == "ok", r["validation"]
        assert (r["provider"], r["model"]) == ("local", MODEL)
        assert r["usage"]["cost_usd"] == 0.0 and r["usage"]["input_tokens"] > 0
    sent: list[Any] = server.message_requests()
    # Ollama has no count_tokens: the start-up question is a one-token message
    probe = [q for q in sent if q.body.get("max_tokens") == 1]
    assert len(probe) == (server.kind == "ollama") and len(sent) == 3 + len(probe)
    assert all(q.status == 200 and q.ignored == [] for q in sent)
    assert not any("authorization" in q.headers or "x-api-key" in q.headers for q in sent)
    assert not any(q.path.startswith("/v1/models") for q in server.requests)

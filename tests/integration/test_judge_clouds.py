"""The judge worker on the real broker through Amazon Bedrock (InvokeModel for an
ARN-versioned model, the bedrock-mantle Messages API for a 5.x model) and Google Vertex AI:
the SDK's own AnthropicBedrock/AnthropicBedrockMantle/AnthropicVertex clients against the
platform fakes (SigV4 from static AWS keys; an OAuth token minted by the ADC chain from a
service-account file), one result per job priced as the catalogue model; and a gated
criterion is told its gate cell's answer from the cell-outcomes topic."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from agents.judge.run import serve
from agents.settings import Settings
from schemas.chart_review import CellOutcome
from streams.topics import ensure_topics
from tests.helpers import collect, produce, values
from tests.helpers import test_settings as make_settings
from tests.unit.agents.judge.fixtures import (
    CRITERIA,
    PATIENT,
    TASK,
    answer,
    disagreement,
    job,
    write_charts,
    write_skill,
)
from tests.unit.agents.providers import cloud_env
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

pytestmark = pytest.mark.integration

GOOD = {"suggested_answer": True, "reasoning": "The problem list documents it. Agent B "
        "misread the family history.",
        "evidence_pointers": [{"note_id": "n01.txt", "what_to_look_for": "problem list",
                               "offsets": None}],
        "agent_correctness": "agent_a", "classification_hint": "agent_b_error",
        "judge_confidence": "high"}


def gated_skill(root: Path) -> Path:
    """The judge fixtures' skill with on_sglt2i gated on t2dm_dx = true."""
    skill = write_skill(root)
    head = {"field_id": "on_sglt2i", **CRITERIA["on_sglt2i"],
            "gate": {"field_id": "t2dm_dx", "value": True}}
    (skill / "references" / "criteria" / "on_sglt2i.md").write_text(
        f"---\n{yaml.safe_dump(head, sort_keys=False)}---\nSGLT2 inhibitor use.\n")
    return skill


def reply(body: dict[str, Any]) -> Reply:
    sglt2 = "criterion on_sglt2i" in json.dumps(body["messages"])
    return Reply.message(text=json.dumps({**GOOD, "suggested_answer": "yes" if sglt2
                                          else True}))


def outcome(agreed: Any) -> bytes:
    return CellOutcome(outcome_id="o-gate", outcome="agreement", task_id=TASK,
                       patient_id=PATIENT, field_id="t2dm_dx", agents=("default", "skeptical"),
                       decided_at=datetime.now(UTC), agreed_answer=agreed
                       ).model_dump_json().encode()


#: (provider, model, the path every model request must end with, model in the body?)
PLATFORMS = {"bedrock-invoke": ("bedrock", "claude-haiku-4-5", "/invoke", False),
             "bedrock-mantle": ("bedrock", "claude-haiku-5-5", "/anthropic/v1/messages", True),
             "vertex": ("vertex", "claude-haiku-4-5", ":rawPredict", False)}
Platform = tuple[str, str, str, bool, FakeAnthropic]


@pytest.fixture(params=sorted(PLATFORMS))
def platform(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch,
             tmp_path: Path) -> Iterator[Platform]:
    name, model, route, in_body = PLATFORMS[request.param]
    env: Any = cloud_env.bedrock if name == "bedrock" else cloud_env.vertex
    ctx: AbstractContextManager[FakeAnthropic] = env(monkeypatch, tmp_path / "cloud")
    (tmp_path / "cloud").mkdir()
    with ctx as fake:
        fake.responder = reply
        yield name, model, route, in_body, fake


async def test_a_judge_worker_on_the_platform(bootstrap: str, tmp_path: Path,
                                              platform: Platform) -> None:
    name, model, route, in_body, fake = platform
    (tmp_path / "data").mkdir()
    settings: Settings = make_settings(
        bootstrap, skill_dir=gated_skill(tmp_path / "data"),
        charts_dir=write_charts(tmp_path / "data"),
        llm={"provider": name, "model": model, "sdk_max_retries": 0,
             "deadline_seconds": 10.0, "requests_per_minute": 6000, "concurrency": 2,
             "max_attempts": 2})
    await ensure_topics(settings)
    # the gate cell was decided (the agents agreed: true) before the gated job arrives
    await produce(bootstrap, settings.topics.cell_outcomes,
                  [(f"{TASK}|{PATIENT}|t2dm_dx".encode(), outcome(True))])
    gated = job("disagreement", answer("default", "yes", field_id="on_sglt2i"),
                answer("skeptical", "no", field_id="on_sglt2i"), job_id="job-gated")
    plain = disagreement(job_id="job-plain")
    await produce(bootstrap, settings.topics.judge_jobs,
                  [(j.key.encode(), j.model_dump_json().encode()) for j in (plain, gated)])
    stop = asyncio.Event()
    task = asyncio.create_task(serve(settings, stop=stop))
    try:
        results = values(await collect(bootstrap, settings.topics.judge_results, until=2,
                                       timeout=60, quiet=0.5))
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)
    by_job = {r["job_id"]: r for r in results}
    assert set(by_job) == {"job-plain", "job-gated"}
    for r in results:
        assert r["status"] == "ok", r["validation"]
        assert (r["provider"], r["model"]) == (name, model)
        assert r["usage"]["cost_usd"] > 0 and r["usage"]["llm_calls"] == 1
        # the ".txt" pointer kept its evidence, suffix stripped
        assert r["analysis"]["evidence_pointers"][0]["note_id"] == "n01"
    sent = [q for q in fake.requests if q.path.endswith(route) and "count-tokens" not in q.path]
    assert len(sent) == 2 and all(("model" in q.body) is in_body for q in sent)
    assert all(q.status == 200 for q in sent)
    if in_body:  # bedrock-mantle: the Bedrock model id, the Messages API's header version
        assert {q.body["model"] for q in sent} == {"anthropic.claude-haiku-5-5"}
        assert {q.headers["anthropic-version"] for q in sent} == {"2026-10-21"}
    cases = {"criterion on_sglt2i" in (c := q.body["messages"][0]["content"]): c
             for q in sent}
    assert "the patient's answer is true (the agents agreed); the gate is met" in cases[True]
    assert "Gate criterion" not in cases[False]


@pytest.mark.parametrize("endpoint", ["bedrock-invoke", "bedrock-mantle"])
async def test_replay_batch_on_bedrock_runs_live_calls(
        bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture, endpoint: str) -> None:
    """Neither Bedrock endpoint has a Message Batches API: ``replay judge --batch`` says so and
    judges every job with live calls (at live prices) instead of failing."""
    _, model, route, _ = PLATFORMS[endpoint]
    from agents.replay.run import Options, replay

    (tmp_path / "data").mkdir()
    (tmp_path / "cloud").mkdir()
    with cloud_env.bedrock(monkeypatch, tmp_path / "cloud") as fake:
        fake.responder = reply
        s = make_settings(bootstrap, skill_dir=write_skill(tmp_path / "data"),
                          charts_dir=write_charts(tmp_path / "data"),
                          llm={"provider": "bedrock", "model": model,
                               "sdk_max_retries": 0, "deadline_seconds": 10.0,
                               "requests_per_minute": 6000, "max_attempts": 2})
        await ensure_topics(s)
        js = [disagreement(job_id=f"job-{i}", patient=PATIENT) for i in range(3)]
        await produce(bootstrap, s.topics.judge_jobs,
                      [(j.key.encode(), j.model_dump_json().encode()) for j in js])
        with caplog.at_level("WARNING"):
            await replay(s, Options(worker="judge", batch=True, poll_seconds=0.05))
        live = [q for q in fake.requests if q.path.endswith(route)]
    assert "has no Message Batches API: --batch runs live calls" in caplog.text
    assert len(live) == 3
    results = values(await collect(bootstrap, s.topics.judge_results, until=3, timeout=20,
                                   quiet=0.5))
    assert sorted(r["job_id"] for r in results) == ["job-0", "job-1", "job-2"]
    assert all(r["provider"] == "bedrock" and r["status"] == "ok" for r in results)

"""``replay judge`` with the chart tools on: ``--dry-run`` prices the tool turns; ``--batch``
answers each job's first turn through the Message Batches API and the rest of the loop live
(tool turns depend on tool results, which a batch cannot carry), through the same journal,
with the batched turn priced at the batch discount and no turn paid twice."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agents.providers.base import TokenUsage
from agents.providers.factory import cost_usd
from agents.settings import Settings
from schemas.chart_review import JudgeJob
from streams.topics import ensure_topics
from tests.helpers import collect, produce, values
from tests.helpers import test_settings as make_settings
from tests.integration.test_cli import run_cli
from tests.integration.test_judge_worker import LLM, record
from tests.integration.test_llm_outage import job_tag
from tests.unit.agents.judge.fixtures import write_skill
from tests.unit.agents.judge.test_tool_loop import NOTES, PATIENT, sglt2_job
from tools.fakes.fake_anthropic import FakeAnthropic
from tools.fakes.fake_chart_judge import ChartJudge
from tools.subproc import WorkerProcess

pytestmark = pytest.mark.integration
BATCH = ("cli.main", "replay", "judge", "--batch", "--poll-seconds", "0.05")
JOBS = 3


def tool_settings(bootstrap: str, tmp_path: Path, **tools: Any) -> Settings:
    charts = tmp_path / "charts" / PATIENT
    charts.mkdir(parents=True, exist_ok=True)
    for note_id, text in NOTES.items():
        (charts / f"{note_id}.txt").write_text(text)
    return make_settings(bootstrap, llm=LLM, skill_dir=write_skill(tmp_path),
                         charts_dir=tmp_path / "charts", chart_tools={"mode": "on", **tools})


def tagged(i: int) -> JudgeJob:
    base = sglt2_job()
    first = base.answers[0].model_copy(update={"rationale": f"job-tag-{i:02d}",
                                               "task_id": f"T{i}"})
    second = base.answers[1].model_copy(update={"task_id": f"T{i}"})
    return base.model_copy(update={"job_id": f"job-tools-{i:02d}", "task_id": f"T{i}",
                                   "answers": (first, second)})


async def test_batch_answers_the_first_turn_and_the_loop_goes_on_live(
        bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = tool_settings(bootstrap, tmp_path)
    await ensure_topics(s, [s.topics.replay_batches])
    js = [tagged(i) for i in range(JOBS)]
    await produce(bootstrap, s.topics.judge_jobs, [record(j) for j in js])
    with FakeAnthropic(responder=ChartJudge()) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        dry = run_cli(s, "replay", "judge", "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert f"to judge: {JOBS} job(s), {3 * JOBS} model call(s) ({2 * JOBS} of them " \
               "chart-tool turns" in dry.stdout, dry.stdout
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test"}
        run = WorkerProcess("replay", s, tmp_path / "batch.log", env, BATCH)
        try:
            assert run.proc.wait(timeout=120) == 0, (tmp_path / "batch.log").read_text()[-3000:]
        finally:
            run.kill()
        succeeded = Counter(fake.batches.succeeded)
        live = fake.message_requests()
    assert len(succeeded) == JOBS and set(succeeded.values()) == {1}
    assert not [r for r in live if r.status != 200]  # the strict fake accepted every turn
    turns = Counter((job_tag(r.body), len(r.body["messages"])) for r in live)
    extra = [json.dumps(r.body["messages"][-2:])[:3000] for r in live
             if len(r.body["messages"]) > 5]
    assert turns == Counter({(f"job-tag-{i:02d}", n): 1 for i in range(JOBS)
                             for n in (3, 5)}), extra
    results = values(await collect(bootstrap, s.topics.judge_results, until=JOBS, timeout=30,
                                   quiet=1))
    assert Counter(r["job_id"] for r in results) == Counter(j.job_id for j in js)
    for r in results:
        assert r["status"] == "ok" and r["analysis"]["suggested_answer"] == "yes"
        assert r["usage"]["llm_calls"] == 3
        u = r["usage"]
        all_live = cost_usd(TokenUsage(u["input_tokens"], u["output_tokens"],
                                       u["cache_read_input_tokens"],
                                       u["cache_creation_input_tokens"]), r["model"], s.llm)
        assert 0 < u["cost_usd"] < all_live  # the first turn at the batch discount

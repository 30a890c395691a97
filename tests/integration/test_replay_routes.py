"""`replay judge` with `llm.criterion_models` and gated criteria, on both brokers, against the
fake Anthropic API: `--dry-run` prices every job at its routed model (per-model lines),
`--batch` judges under the dry run's version with each request carrying its criterion's
model (it used to run the default model's version and end "new results 0", exit 0), and a
replay tells a gated criterion its gate cell's answer from the cell-outcomes and
adjudications topics, as the live worker does (it used to say "not known")."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest

from agents.judge.versioning import prompt_version, result_id
from agents.providers.base import TokenUsage
from agents.providers.factory import cost_usd
from agents.settings import Settings
from schemas.chart_review import JudgeJob
from schemas.skill import load_skill
from streams.topics import ensure_topics
from tests.helpers import collect, produce, values
from tests.helpers import test_settings as make_settings
from tests.integration.test_cli import run_cli
from tests.integration.test_judge_clouds import gated_skill, outcome, reply
from tests.integration.test_judge_worker import LLM, record
from tests.unit.agents.judge.fixtures import PATIENT, TASK, answer, job, write_charts
from tools.fakes.fake_anthropic import FakeAnthropic

pytestmark = pytest.mark.integration
HAIKU = "claude-haiku-5-5"
SONNET = str(LLM["model"])
ROUTES = {"t2dm_dx": {"model": HAIKU}}


def routed_settings(bootstrap: str, tmp_path: Path, routes: Any = None) -> Settings:
    (tmp_path / "data").mkdir(exist_ok=True)
    return make_settings(bootstrap, llm={**LLM, "criterion_models": routes or ROUTES},
                         skill_dir=gated_skill(tmp_path / "data"),
                         charts_dir=write_charts(tmp_path / "data"))


def cells(n: int) -> list[JudgeJob]:
    """n disagreements on t2dm_dx (routed to Haiku) and n on on_sglt2i (the default model,
    gated on t2dm_dx), one task each."""
    out = []
    for i in range(n):
        for field_id, a, b in (("t2dm_dx", True, False), ("on_sglt2i", "yes", "no")):
            base = job("disagreement", answer("default", a, field_id=field_id),
                       answer("skeptical", b, field_id=field_id), job_id=f"job-{field_id}-{i}")
            out.append(base.model_copy(update={"task_id": f"T{i}", "answers": tuple(
                x.model_copy(update={"task_id": f"T{i}"}) for x in base.answers)}))
    return out


def head_version(stdout: str) -> str:
    return stdout.split("replay judge under ")[1].split()[0]


async def test_batch_replay_uses_the_criterion_models_of_its_dry_run(
        bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = routed_settings(bootstrap, tmp_path)
    await ensure_topics(s, [s.topics.replay_batches])
    js = cells(2)
    await produce(bootstrap, s.topics.judge_jobs, [record(j) for j in js])
    with FakeAnthropic(responder=reply) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        dry = run_cli(s, "replay", "judge", "--dry-run", "--batch")
        run = run_cli(s, "replay", "judge", "--batch", "--poll-seconds", "0.05")
        batched = [(r["custom_id"], r["params"]["model"])
                   for b in fake.batches.batches.values() for r in b.requests]
        live = fake.message_requests()
    assert dry.returncode == 0, dry.stderr
    assert run.returncode == 0, run.stdout + run.stderr[-3000:]
    assert head_version(run.stdout) == head_version(dry.stdout)
    assert "+routes-" in head_version(dry.stdout)
    assert "to judge: 4 job(s), 4 model call(s)" in dry.stdout, dry.stdout
    assert "new results 4," in run.stdout, run.stdout
    assert sorted(m for _, m in batched) == [HAIKU, HAIKU, SONNET, SONNET]
    assert not live  # every first call answered by a batch
    results = values(await collect(bootstrap, s.topics.judge_results, until=4, timeout=20,
                                   quiet=1))
    assert {r["field_id"]: r["model"] for r in results} == {"t2dm_dx": HAIKU,
                                                            "on_sglt2i": SONNET}
    assert all(r["status"] == "ok" for r in results), [r["validation"] for r in results]
    by_id = dict(batched)
    assert all(by_id[r["result_id"]] == r["model"] for r in results)


async def test_a_batch_run_with_jobs_left_unanswered_does_not_exit_0(
        bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = routed_settings(bootstrap, tmp_path)
    await ensure_topics(s, [s.topics.replay_batches])
    js = cells(1)
    await produce(bootstrap, s.topics.judge_jobs, [record(j) for j in js])
    sglt2 = next(j for j in js if j.field_id == "on_sglt2i")
    stuck = result_id(sglt2.job_id, prompt_version(s, load_skill(s.skill_dir), "anthropic",
                                                   SONNET))
    with FakeAnthropic(responder=reply) as fake:
        fake.batches.outcomes = {stuck: ["expired"] * 10}  # every round's entry expires
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        run = run_cli(s, "replay", "judge", "--batch", "--poll-seconds", "0.05")
    assert run.returncode == 1, run.stdout + run.stderr[-2000:]
    assert "new results 1," in run.stdout
    assert "NOT DONE: 1 job(s) got no batch answer" in run.stdout, run.stdout


async def test_dry_run_prices_each_job_at_its_routed_model(
        bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = routed_settings(bootstrap, tmp_path)
    await ensure_topics(s)
    await produce(bootstrap, s.topics.judge_jobs, [record(j) for j in cells(2)])
    with FakeAnthropic(responder=reply) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        dry = run_cli(s, "replay", "judge", "--dry-run")
        run = run_cli(s, "replay", "judge", "--budget-usd", "5")
        counted = {r.body.get("model") for r in fake.requests
                   if r.path.endswith("/count_tokens")}
    assert dry.returncode == 0 and run.returncode == 0, dry.stderr + run.stderr[-2000:]
    assert f"routed by llm.criterion_models: {HAIKU}" in dry.stdout, dry.stdout
    lines = {line.split(":")[0].strip(): line for line in dry.stdout.splitlines()
             if line.startswith("    claude-")}
    assert set(lines) == {HAIKU, SONNET}
    assert "2 call(s)" in lines[HAIKU] and "2 call(s)" in lines[SONNET]

    def usd(text: str) -> float:
        return float(text.rsplit("$", 1)[1].split()[0])

    total = float(dry.stdout.split("estimated cost: $")[1].split()[0])
    assert usd(lines[HAIKU]) + usd(lines[SONNET]) == pytest.approx(total, abs=2e-4)
    assert usd(lines[HAIKU]) * 5 < usd(lines[SONNET])  # Haiku's rates, not Sonnet's
    assert counted == {HAIKU, SONNET}  # each counted by its own model
    results = values(await collect(bootstrap, s.topics.judge_results, until=4, timeout=20,
                                   quiet=1))
    for r in results:  # what the run paid per model is what the catalogue says for it
        u = r["usage"]
        usage = TokenUsage(u["input_tokens"], u["output_tokens"],
                           u["cache_read_input_tokens"], u["cache_creation_input_tokens"])
        assert u["cost_usd"] == pytest.approx(cost_usd(usage, r["model"], s.llm))


async def test_a_replay_tells_the_judge_the_gate_answer(
        bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    s = routed_settings(bootstrap, tmp_path)
    await ensure_topics(s)
    # patient T0 had its gate cell decided by the agents (true); on T1 the agents agreed on
    # false but a reviewer adjudicated true, which outranks them; T2 is undecided
    key = f"{TASK}|{PATIENT}|t2dm_dx"
    decided = [(f"T{i}|{PATIENT}|t2dm_dx".encode(),
                orjson.dumps({**orjson.loads(outcome(v)), "task_id": f"T{i}"}))
               for i, v in ((0, True), (1, False))]
    await produce(bootstrap, s.topics.cell_outcomes, decided)
    now = datetime.now(UTC).isoformat()
    adj = {"adjudication_id": "adj-1", "task_id": "T1", "patient_id": PATIENT,
           "field_id": "t2dm_dx", "final_answer": True, "classification": "agent_b_error",
           "adjudicator": "r1", "adjudicated_at": now}
    await produce(bootstrap, s.topics.adjudications,
                  [(key.replace(TASK, "T1").encode(), orjson.dumps(adj))])
    gated = [j for j in cells(3) if j.field_id == "on_sglt2i"]
    await produce(bootstrap, s.topics.judge_jobs, [record(j) for j in gated])
    with FakeAnthropic(responder=reply) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        run = run_cli(s, "replay", "judge", "--criterion", "on_sglt2i")
        sent = [json.dumps(q.body["messages"]) for q in fake.message_requests()]
    assert run.returncode == 0, run.stderr[-2000:]
    assert "new results 3," in run.stdout, run.stdout

    def case_of(task: str) -> Any:
        return next(c for c in sent if f"task {task}," in c)

    gate = "Gate criterion t2dm_dx: the patient's answer is "
    assert gate + "true (the agents agreed); the gate is met" in case_of("T0")
    assert gate + "true (a reviewer adjudicated it); the gate is met" in case_of("T1")
    assert gate + "not known to the judge (its cell has not been decided yet)" \
        in case_of("T2")


@pytest.mark.parametrize(("override", "error"), [
    # retired per the Models API: it used to publish "status: fallback" results and exit 0
    ({"model": "claude-sonnet-4-5"},
     "model 'claude-sonnet-4-5' (JUDGEFLOW_LLM__CRITERION_MODELS[\"t2dm_dx\"].model) is "
     "retired on 2026-11-30; set JUDGEFLOW_LLM__CRITERION_MODELS[\"t2dm_dx\"].model to e.g. "
     "claude-sonnet-5-5"),
    # efforts Haiku 4.5 does not take (the Models API lists none)
    ({"model": "claude-haiku-4-5", "effort": "max"},
     "JUDGEFLOW_LLM__CRITERION_MODELS[\"t2dm_dx\"].effort 'max' is not accepted by "
     "claude-haiku-4-5"),
])
async def test_a_replay_checks_each_routed_model_at_start_as_the_worker_does(
        bootstrap: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        override: dict[str, str], error: str) -> None:
    # the worker refuses to start (exit 2, one line naming the override), and so does a
    # replay, dry or not, before any job is priced or judged
    s = routed_settings(bootstrap, tmp_path, {"t2dm_dx": override})
    await ensure_topics(s)
    await produce(bootstrap, s.topics.judge_jobs, [record(j) for j in cells(1)])
    with FakeAnthropic(responder=reply) as fake:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        procs = [run_cli(s, "worker", "judge"), run_cli(s, "replay", "judge", "--dry-run"),
                 run_cli(s, "replay", "judge", "--criterion", "t2dm_dx"),
                 run_cli(s, "replay", "judge", "--batch", "--poll-seconds", "0.05")]
        sent = fake.message_requests()
    for proc in procs:
        assert proc.returncode == 2, proc.stdout + proc.stderr[-2000:]
        assert error in proc.stderr, proc.stderr[-2000:]
        assert "Traceback" not in proc.stderr and "new results" not in proc.stdout
    assert not sent
    assert not values(await collect(bootstrap, s.topics.judge_results, timeout=1, quiet=0))

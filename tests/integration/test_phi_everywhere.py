"""No patient data in any log, dead-letter header or metric of any worker, at any level.

A marker is planted in every free field of every input (agent answers: rationales, quotes,
answer values, low-confidence reasons; judge jobs; debrief requests: transcripts, notes,
rubric text; adjudications: final answers; the patient's chart notes), and in the key names
and values of malformed records that must be dead-lettered. All four workers run on them
(detect, judge and debrief against the fake Anthropic API, calibrate), with the level given
as the ``--log-level`` flag, as ``JUDGEFLOW_LOG_LEVEL`` and at INFO. Then every log line,
every dead-letter header of every DLQ and every metric each worker serves is searched: zero
hits. The control run sets ``JUDGEFLOW_UNSAFE_DEBUG_LOG_PHI=1`` and must find the marker (so
the search is not vacuous and the planting reached the libraries' logs).
"""

from __future__ import annotations

import asyncio
import json
import socket
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import BaseModel, ValidationError

from agents.debrief.sampledata import REQUESTS_FILE
from agents.settings import Settings
from schemas.calibration import Adjudication
from schemas.chart_review import AgentAnswer, JudgeJob
from schemas.medkit import DebriefRequest
from streams.logsafety import UNSAFE_ENV
from streams.topics import ensure_topics
from tests.helpers import WorkerProcess, collect, produce
from tests.integration.test_judge_worker import GOOD, judge_settings
from tests.unit.agents.debrief.support import attending, is_debrief
from tests.unit.agents.judge.fixtures import PATIENT, TASK, answer, disagreement
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

pytestmark = pytest.mark.integration

MARK = "zqphimark"
WORKERS = ("detect", "judge", "debrief", "calibrate")
LLM = {"provider": "anthropic", "model": "claude-sonnet-5-5", "sdk_max_retries": 0,
       "deadline_seconds": 10.0, "backoff_base_seconds": 0.05, "requests_per_minute": 6000,
       "concurrency": 4, "max_attempts": 2}


def plant(model: type[BaseModel], data: Any, skip: Callable[[str], bool] = lambda k: False
          ) -> Any:
    """``data`` with the marker appended to every string leaf that the model still accepts
    so (ids and enums refuse it and keep their value): every free field carries it."""
    def paths(node: Any, at: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        if isinstance(node, dict):
            return [p for k, v in node.items() for p in paths(v, (*at, k))]
        if isinstance(node, list):
            return [p for i, v in enumerate(node) for p in paths(v, (*at, i))]
        return [at] if isinstance(node, str) else []

    def setter(node: Any, at: tuple[Any, ...], value: Any) -> None:
        for step in at[:-1]:
            node = node[step]
        node[at[-1]] = value

    out = json.loads(json.dumps(data))
    for at in paths(out, ()):
        key = str(next((s for s in reversed(at) if isinstance(s, str)), ""))
        if key.endswith(("_id", "Id")) or key in ("id", "cell") or skip(key):
            continue
        node = out
        for step in at:
            node = node[step]
        setter(out, at, f"{node} {MARK}")
        try:
            model.model_validate(out)
        except ValidationError:
            setter(out, at, node)
    return out


def marked_answers() -> list[tuple[bytes, bytes]]:
    """A disagreement (answers kept valid, text marked: the judge calls the model) and a
    type drift whose answer value itself is marked."""
    pairs = [answer("default", True, quotes=(("n01", "Type 2 diabetes mellitus"),)),
             answer("skeptical", False, quotes=(("n02", "No personal history"),),
                    confidence="low", reason="unsure"),
             answer("default", "yes", field_id="on_sglt2i"),
             answer("skeptical", "no", field_id="on_sglt2i")]
    out = []
    for i, a in enumerate(pairs):
        data = plant(AgentAnswer, a.model_dump(mode="json"),
                     skip=(lambda k: k == "answer") if i < 2 else (lambda k: False))
        if i == 2:
            data["answer"] = f"yes {MARK}"
        out.append((a.key.encode(), orjson.dumps(data)))
    return out


def marked_job() -> tuple[bytes, bytes]:
    j = disagreement(job_id="job-phi-direct")
    data = plant(JudgeJob, j.model_dump(mode="json"), skip=lambda k: k == "answer")
    return j.key.encode(), orjson.dumps(data)


def marked_request() -> tuple[bytes, bytes]:
    data = orjson.loads(REQUESTS_FILE.read_bytes().splitlines()[0])
    planted = plant(DebriefRequest, data)
    return planted["request_id"].encode(), orjson.dumps(planted)


def marked_adjudication() -> tuple[bytes, bytes]:
    a = {"task_id": TASK, "patient_id": PATIENT, "field_id": "t2dm_dx",
         "final_answer": f"yes {MARK}", "classification": "agent_b_error",
         "adjudicator": "rev-1", "adjudicated_at": "2025-01-02T00:00:00Z"}
    return f"{TASK}|{PATIENT}|t2dm_dx".encode(), orjson.dumps(plant(Adjudication, a))


def poison(valid: bytes) -> list[tuple[bytes, bytes]]:
    """Malformed records carrying the marker in a key name, a value and broken JSON."""
    data = orjson.loads(valid)
    extra = {**data, f"{MARK}_key": f"{MARK} value"}
    wrong = {**data, next(iter(data)): {MARK: [MARK]}}
    return [(b"k", orjson.dumps(extra)), (b"k", orjson.dumps(wrong)),
            (b"k", f'{{"{MARK}": "{MARK}'.encode())]


def responder(body: dict[str, Any]) -> Reply:
    if is_debrief(body):  # the tool or the structured-outputs path
        return attending(body)
    return Reply.message(text=json.dumps(GOOD))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as resp:
        return str(resp.read().decode())


def lines_with_mark(text: str) -> list[str]:
    return [line for line in text.splitlines() if MARK in line]


async def _inputs(settings: Settings) -> None:
    t, b = settings.topics, settings.kafka.bootstrap_servers
    await ensure_topics(settings)
    answers, job = marked_answers(), marked_job()
    request, adjudication = marked_request(), marked_adjudication()
    await produce(b, t.agent_answers, answers + poison(answers[0][1]))
    await produce(b, t.judge_jobs, [job, *poison(job[1])])
    await produce(b, t.debrief_requests, [request, *poison(request[1])])
    await produce(b, t.adjudications, [adjudication, *poison(adjudication[1])])


def run_all(tmp_path: Path, level: str, how: str, unsafe: bool) -> dict[str, Any]:
    """Run the four workers over the marked inputs; the marked lines of each log, of the
    dead-letter headers and of the metrics."""
    bootstrap = _bootstrap()
    settings = judge_settings(bootstrap, tmp_path, llm=LLM)
    (tmp_path / "data" / "charts" / PATIENT / "n05.txt").write_text(
        f"Diabetes follow-up: {MARK} lives at 1 Marker Street; A1c 8.0%.\n")
    asyncio.run(_inputs(settings))
    t = settings.topics
    with FakeAnthropic(responder=responder) as fake:
        env = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.base_url}
        if unsafe:
            env[UNSAFE_ENV] = "1"
        procs, ports = {}, {}
        for name in WORKERS:
            ports[name] = free_port()
            s = settings.model_copy(update={"metrics_port": ports[name]})
            if how == "env":
                s = s.model_copy(update={"log_level": level})
            args = ("cli.main", *(("--log-level", level) if how == "flag" else ()),
                    "worker", name)
            procs[name] = WorkerProcess(name, s, tmp_path / f"{name}.log", env,
                                        module_args=args)
        try:
            waits = [(t.judge_results, 2), (t.case_evaluations, 1), (t.calibration, 1),
                     (t.cell_outcomes, 2), *((t.dlq(x), 3) for x in (
                         t.agent_answers, t.judge_jobs, t.debrief_requests, t.adjudications))]
            got = {topic: asyncio.run(collect(bootstrap, topic, until=n, timeout=60, quiet=0.5))
                   for topic, n in waits}
            metrics = {name: scrape(port) for name, port in ports.items()}
        finally:
            for proc in procs.values():
                proc.stop()
    logs = {name: (tmp_path / f"{name}.log").read_text(errors="replace") for name in WORKERS}
    for topic, n in waits:
        assert len(got[topic]) >= n, (topic, {k: v[-3000:] for k, v in logs.items()})
    headers = [f"{k}: {v.decode(errors='replace')}" for topic, recs in got.items()
               if topic.endswith(".dlq") for r in recs for k, v in r.headers]
    return {"logs": {k: lines_with_mark(v) for k, v in logs.items()},
            "headers": lines_with_mark("\n".join(headers)),
            "metrics": {k: lines_with_mark(v) for k, v in metrics.items()},
            "log_lines": {k: len(v.splitlines()) for k, v in logs.items()},
            # the detector's own DEBUG lines (in judgeflow's format, which the worker puts
            # on Faust's handler too): one per answer it read, so its DEBUG path is
            # searched too, not just its INFO lines
            "detect_debug": [line for line in logs["detect"].splitlines()
                             if " DEBUG streams.detect.faust_edge: cell " in line
                             or "[DEBUG] cell " in line]}


_BOOTSTRAP: list[str] = []


def _bootstrap() -> str:
    return _BOOTSTRAP[0]


@pytest.fixture(autouse=True)
def _remember(bootstrap: str) -> None:
    _BOOTSTRAP[:] = [bootstrap]


@pytest.mark.parametrize(("level", "how"), [("DEBUG", "flag"), ("DEBUG", "env"),
                                             ("INFO", "flag")])
def test_no_marker_in_any_log_header_or_metric(tmp_path: Path, level: str, how: str) -> None:
    found = run_all(tmp_path, level, how, unsafe=False)
    print(f"phi {level}/{how}: log lines with marker "
          f"{ {k: len(v) for k, v in found['logs'].items()} } of {found['log_lines']}, "
          f"headers {len(found['headers'])}, metrics "
          f"{sum(len(v) for v in found['metrics'].values())}")
    assert found["headers"] == []
    assert found["metrics"] == {key: [] for key in WORKERS}
    assert found["logs"] == {key: [] for key in WORKERS}, {
        k: v[:3] for k, v in found["logs"].items()}
    assert all(found["log_lines"].values())  # every worker did log
    if level == "DEBUG":  # issue 25: detect's DEBUG lines ran over the marked answers
        assert len(found["detect_debug"]) >= len(marked_answers()), found["detect_debug"]


def test_the_unsafe_switch_lets_the_marker_through(tmp_path: Path) -> None:
    """The control: the planting reaches the libraries' DEBUG logs, so the search above
    would see a leak."""
    found = run_all(tmp_path, "DEBUG", "flag", unsafe=True)
    counts = {k: len(v) for k, v in found["logs"].items()}
    print(f"phi unsafe DEBUG/flag: log lines with marker {counts}")
    assert counts["judge"] > 0 and counts["debrief"] > 0 and counts["detect"] > 0, counts

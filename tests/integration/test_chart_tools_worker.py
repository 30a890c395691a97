"""The judge worker with the chart tools on, against the strict fake Messages API and a real
broker (embedded and Apache Kafka): the fake judge model searches, reads, then answers citing
what it read; a SIGKILL mid-loop (search and read paid, the answer turn in flight) and a
restart re-pay no turn: every turn of every job is paid exactly once, and every request
the worker sent obeyed the API's tool rules (the strict fake rejects the others)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from schemas.chart_review import JudgeJob
from streams.topics import ensure_topics
from tests.helpers import WorkerProcess, collect, produce, values
from tests.helpers import test_settings as make_settings
from tests.integration.test_judge_worker import LLM, record
from tests.integration.test_llm_outage import job_tag
from tests.unit.agents.judge.fixtures import write_skill
from tests.unit.agents.judge.test_tool_loop import NOTES, PATIENT, sglt2_job
from tools.fakes.fake_anthropic import FakeAnthropic, Reply
from tools.fakes.fake_chart_judge import ChartJudge

pytestmark = pytest.mark.integration
JOBS = 6
ANSWER_TURN = 5  # messages in the answer turn's request: case, search, result, read, result


class HoldAnswerTurns:
    """The fake judge model, except that answer turns wait unanswered until ``release``."""

    def __init__(self) -> None:
        self.model = ChartJudge()
        self.release = threading.Event()
        self.held = 0
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        if len(body.get("messages", [])) >= ANSWER_TURN and not self.release.is_set():
            with self._lock:
                self.held += 1
            return Reply(status=503, body={"type": "error", "error": {
                "type": "api_error", "message": "held"}}, delay=3600)
        return self.model(body)


def tagged(i: int) -> JudgeJob:
    base = sglt2_job()
    first = base.answers[0].model_copy(update={"rationale": f"job-tag-{i:02d}"})
    return base.model_copy(update={"job_id": f"job-tools-{i:02d}",
                                   "answers": (first, *base.answers[1:])})


def test_a_kill_mid_tool_loop_pays_no_turn_twice(bootstrap: str, tmp_path: Path) -> None:
    charts = tmp_path / "charts" / PATIENT
    charts.mkdir(parents=True)
    for note_id, text in NOTES.items():
        (charts / f"{note_id}.txt").write_text(text)
    s = make_settings(bootstrap, llm=LLM, skill_dir=write_skill(tmp_path),
                      charts_dir=tmp_path / "charts", chart_tools={"mode": "on"})
    asyncio.run(ensure_topics(s))
    jobs = [tagged(i) for i in range(JOBS)]
    asyncio.run(produce(bootstrap, s.topics.judge_jobs, [record(j) for j in jobs]))
    hold = HoldAnswerTurns()
    with FakeAnthropic(responder=hold) as fake:
        env = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.base_url}
        first = WorkerProcess("judge", s, tmp_path / "judge-1.log", env)
        try:
            deadline = time.monotonic() + 90
            want = min(JOBS, LLM["concurrency"])
            while hold.held < want and time.monotonic() < deadline:
                time.sleep(0.05)
            assert hold.held >= want, first.log_text()[-3000:]
        finally:
            first.kill()  # SIGKILL: two turns paid per held job, its answer in flight
        hold.release.set()
        second = WorkerProcess("judge", s, tmp_path / "judge-2.log", env)
        try:
            got = asyncio.run(collect(
                bootstrap, s.topics.judge_results, timeout=120, quiet=1.0,
                done=lambda rs: len({orjson.loads(r.value)["job_id"] for r in rs}) >= JOBS))
            log = second.log_text()
        finally:
            second.kill()
        sent = fake.message_requests()
    paid = Counter((job_tag(r.body), len(r.body["messages"])) for r in sent if r.status == 200)
    twice = sum(n - 1 for n in paid.values())
    print(f"kill mid tool loop: {len(paid)} turns paid, paid twice {twice}, answer turns "
          f"in flight at the kill {hold.held}")
    assert not [r for r in sent if r.status == 400], "the strict fake rejected a request"
    assert twice == 0, log[-3000:]
    assert set(paid) == {(f"job-tag-{i:02d}", n) for i in range(JOBS) for n in (1, 3, 5)}
    results = {r["job_id"]: r for r in values(got)}
    assert set(results) == {j.job_id for j in jobs}
    for r in results.values():
        assert r["status"] == "ok" and r["analysis"]["suggested_answer"] == "yes"
        assert r["usage"]["llm_calls"] == 3
        assert ("read_note", "n05") in {(a["tool"], a["note_id"]) for a in r["consulted"]}

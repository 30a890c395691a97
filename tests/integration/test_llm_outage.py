"""An LLM outage dead-letters nothing and pays nothing twice (judge and debrief workers).

The fake Anthropic API answers 529 to every request for ``OUTAGE`` seconds
(``JUDGEFLOW_TEST_OUTAGE_SECONDS``, default 6; the note's 60 s figure is this test with 60)
while the workers run in their own processes. The breaker opens (``judgeflow_breaker_state``
seen at 1 or 2 on the metrics endpoint), the partitions pause, and after the outage every job
and request has exactly one result and the DLQs are empty.

Judge answers need a repair round-trip here (the first answer is garbled), so an outage
that hits the repair call is exactly the case that used to throw a paid first answer away:
a paid answer is kept in the LLM journal and reused, so no identical request is answered
(paid) twice.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from agents.debrief.sampledata import REQUESTS_FILE
from agents.settings import Settings
from schemas.chart_review import JudgeJob
from streams.topics import ensure_topics
from tests.helpers import WorkerProcess, collect, produce, values
from tests.integration.test_judge_worker import GOOD, judge_settings, record
from tests.unit.agents.debrief.support import attending, request_in
from tests.unit.agents.judge.fixtures import disagreement
from tools.fakes.fake_anthropic import FakeAnthropic, Received, Reply

pytestmark = pytest.mark.integration

OUTAGE = float(os.environ.get("JUDGEFLOW_TEST_OUTAGE_SECONDS", "6"))
JOBS = 24
LLM = {"provider": "anthropic", "model": "claude-sonnet-5-5", "sdk_max_retries": 0,
       "deadline_seconds": 4.0, "backoff_base_seconds": 0.2, "requests_per_minute": 6000,
       "concurrency": 4, "max_attempts": 3, "breaker_backoff_seconds": 0.5,
       "breaker_backoff_max_seconds": 2.0}


TAG = re.compile(r"job-tag-\d+")


def job_tag(body: dict[str, Any]) -> str:
    found = TAG.search(json.dumps(body.get("messages", [])))
    return found.group(0) if found else "?"


def request_tag(body: dict[str, Any]) -> str:
    return request_in(body).request_id


def call_key(r: Received, ident: Callable[[dict[str, Any]], str]) -> tuple[str, int, int]:
    """Which call of which input a request is: the input (``ident``: a tag planted in its
    text, or the request id), its turn (messages so far) and its token budget (a max_tokens
    retry doubles it). Bodies themselves differ on every send (a fresh data-boundary
    token), so they cannot be compared."""
    return (ident(r.body), len(r.body.get("messages", [])), int(r.body.get("max_tokens") or 0))


def double_paid(fake: FakeAnthropic, ident: Callable[[dict[str, Any]], str]) -> int:
    """Calls answered (HTTP 200: paid) more than once for the same input, turn and budget:
    an answer received, then paid for again."""
    paid = Counter(call_key(r, ident) for r in fake.message_requests() if r.status == 200)
    return sum(n - 1 for n in paid.values())


def tagged_job(i: int) -> JudgeJob:
    base = disagreement(job_id=f"job-outage-{i:02d}")
    first = base.answers[0].model_copy(update={"rationale": f"job-tag-{i:02d}"})
    return base.model_copy(update={"answers": (first, *base.answers[1:])})


class GarbledThenGood:
    """A first answer that fails validation; the repair turn gets a good one. The outage
    starts ON the ``start_at``-th repair request (it gets the first 529), so at least that
    job's paid first answer must be reused after the outage, never paid again."""

    def __init__(self, fake: FakeAnthropic, start_at: int = 5) -> None:
        self.fake, self.start_at, self.repairs = fake, start_at, 0
        self.started = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Reply:
        if len(body.get("messages", [])) > 1:
            self.repairs += 1
            if self.repairs == self.start_at:
                self.fake.outage = Reply.error(529)
                self.started.set()
                return self.fake.outage
            return Reply.message(text=json.dumps(GOOD))
        return Reply.message(text='{"verdict": "yes"}')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class BreakerWatch(threading.Thread):
    """Scrapes a worker's breaker gauge every 0.2 s; remembers the states seen."""

    def __init__(self, port: int, worker: str) -> None:
        super().__init__(daemon=True)
        self.url, self.worker = f"http://127.0.0.1:{port}/metrics", worker
        self.seen: set[float] = set()
        self.lag_seen = False
        self.reused = 0.0
        #: reasons ``judgeflow_llm_halted`` was seen at 1 for (spend_limit, billing)
        self.halted: set[str] = set()
        self.done = threading.Event()

    def run(self) -> None:
        needle = f'judgeflow_breaker_state{{worker="{self.worker}"}} '
        while not self.done.wait(0.2):
            try:
                with urllib.request.urlopen(self.url, timeout=2) as resp:
                    text = resp.read().decode()
            except OSError:
                continue
            for line in text.splitlines():
                if line.startswith(needle):
                    self.seen.add(float(line.split()[-1]))
                if line.startswith("judgeflow_consumer_lag{"):
                    self.lag_seen = True
                if line.startswith("judgeflow_llm_halted{") and line.endswith(" 1.0"):
                    self.halted.add(line.split('reason="')[1].split('"')[0])
                if line.startswith("judgeflow_llm_calls_total{") and 'status="reused"' in line:
                    self.reused = max(self.reused, float(line.split()[-1]))


def outage_run(name: str, settings: Settings, tmp_path: Path, fake: FakeAnthropic,
               out_topic: str, n: int, first: int,
               started: threading.Event | None = None,
               outage: Reply | None = None) -> dict[str, Any]:
    """Run worker ``name``; once ``first`` outputs exist (or ``started`` is set: the fake
    began the outage itself), an outage of OUTAGE seconds (every request answered with
    ``outage``, default a 529); then wait for ``n`` outputs. Returns the outputs, dead
    letters, states seen and timings."""
    port = free_port()
    s = settings.model_copy(update={"metrics_port": port})
    env = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.base_url}
    # no retry-after: our backoff (0.2 s base) is short, so the bounded retries of a call
    # end well before its deadline: no answer is ever cut off in flight by the deadline,
    # and every answer the fake sends is received (a paid answer is never lost unseen)
    fake.default_retry_after = None
    watch = BreakerWatch(port, name)
    watch.start()
    in_topic = {"judge": s.topics.judge_jobs, "debrief": s.topics.debrief_requests}[name]
    with WorkerProcess(name, s, tmp_path / f"{name}.log", env) as proc:
        if started is not None:
            assert started.wait(60), proc.log_text()[-3000:]
        else:
            asyncio.run(collect(s.kafka.bootstrap_servers, out_topic, until=first, timeout=60,
                                quiet=0))
            fake.outage = outage or Reply.error(529)
        started = time.monotonic()
        time.sleep(OUTAGE)
        fake.outage = None
        out = asyncio.run(collect(s.kafka.bootstrap_servers, out_topic, until=n,
                                  timeout=120 + OUTAGE, quiet=1.0))
        recovered = time.monotonic() - started - OUTAGE
        dead = asyncio.run(collect(s.kafka.bootstrap_servers, s.topics.dlq(in_topic),
                                   timeout=2, quiet=0))
        log = proc.log_text()
    watch.done.set()
    return {"out": values(out), "dead": dead, "states": watch.seen, "lag": watch.lag_seen,
            "reused": watch.reused, "halted": watch.halted,
            "recovered_s": recovered, "log": log}


def test_judge_outage_pauses_and_resumes_without_dead_letters_or_double_pay(
        bootstrap: str, tmp_path: Path) -> None:
    settings = judge_settings(bootstrap, tmp_path, llm=LLM)
    asyncio.run(ensure_topics(settings))
    jobs = [tagged_job(i) for i in range(JOBS)]
    asyncio.run(produce(bootstrap, settings.topics.judge_jobs, [record(j) for j in jobs]))
    with FakeAnthropic(latency=0.3) as fake:
        fake.responder = responder = GarbledThenGood(fake)
        got = outage_run("judge", settings, tmp_path, fake, settings.topics.judge_results,
                         JOBS, first=4, started=responder.started)
        repaid = double_paid(fake, job_tag)
        refused = sum(r.status == 529 for r in fake.message_requests())
    ids = Counter(r["job_id"] for r in got["out"])
    print(f"outage judge {OUTAGE:g}s: dead letters {len(got['dead'])}, double-paid {repaid}, "
          f"529s {refused}, results {len(ids)}/{JOBS}, recovered in "
          f"{got['recovered_s']:.1f}s, breaker states {sorted(got['states'])}, reused "
          f"{got['reused']:g}")
    assert len(got["dead"]) == 0, got["log"][-3000:]
    assert ids == Counter(j.job_id for j in jobs), got["log"][-3000:]
    assert {r["status"] for r in got["out"]} == {"ok"}
    assert refused > 0  # the outage was real
    assert got["states"] & {1.0, 2.0} and 0.0 in got["states"], got["states"]
    assert got["lag"]
    assert got["reused"] >= 1  # the paid first answer of the job cut off at its repair
    assert repaid == 0, got["log"][-3000:]


def test_a_spend_limit_halts_the_judge_until_it_is_raised(bootstrap: str,
                                                          tmp_path: Path) -> None:
    """A contract spend limit whose message says nothing about spending (only
    ``error.details.error_code`` does): the worker halts (gauge 1, one ERROR line naming the
    code), dead-letters nothing, and resumes by itself once the limit is raised."""
    settings = judge_settings(bootstrap, tmp_path, llm=LLM)
    asyncio.run(ensure_topics(settings))
    jobs = [tagged_job(i) for i in range(8)]
    asyncio.run(produce(bootstrap, settings.topics.judge_jobs, [record(j) for j in jobs]))
    limit = Reply.spend_limit("contract_spend_limit_reached", message="Request not allowed.")
    with FakeAnthropic(latency=0.2) as fake:
        fake.responder = lambda body: Reply.message(text=json.dumps(GOOD))
        got = outage_run("judge", settings, tmp_path, fake, settings.topics.judge_results,
                         len(jobs), first=2, outage=limit)
        refused = sum(r.status == 429 for r in fake.message_requests())
    paused = [line for line in got["log"].splitlines() if "LLM calls paused" in line]
    print(f"spend limit {OUTAGE:g}s: 429s {refused}, halted {sorted(got['halted'])}, "
          f"paused lines {len(paused)}, dead letters {len(got['dead'])}")
    assert refused > 0 and got["halted"] == {"spend_limit"}, got["log"][-3000:]
    assert len(paused) == 1 and "contract_spend_limit_reached" in paused[0], paused
    assert "resumed" in got["log"]
    assert len(got["dead"]) == 0, got["log"][-3000:]
    assert Counter(r["job_id"] for r in got["out"]) == Counter(j.job_id for j in jobs)


def test_debrief_outage_pauses_and_resumes_without_dead_letters(bootstrap: str,
                                                                tmp_path: Path) -> None:
    from tests.helpers import test_settings as make_settings

    settings = make_settings(bootstrap, llm=LLM)
    asyncio.run(ensure_topics(settings))
    lines = REQUESTS_FILE.read_bytes().splitlines()
    requests = [(orjson.loads(r)["request_id"].encode(), r) for r in lines]
    asyncio.run(produce(bootstrap, settings.topics.debrief_requests, requests))
    with FakeAnthropic(responder=attending, latency=0.5) as fake:
        got = outage_run("debrief", settings, tmp_path, fake, settings.topics.case_evaluations,
                         len(requests), first=1)
        repaid = double_paid(fake, request_tag)
    ids = Counter(e["request_id"] for e in got["out"])
    print(f"outage debrief {OUTAGE:g}s: dead letters {len(got['dead'])}, double-paid "
          f"{repaid}, evaluations {len(ids)}/{len(requests)}, breaker {sorted(got['states'])}")
    assert len(got["dead"]) == 0, got["log"][-3000:]
    assert ids == Counter(k.decode() for k, _ in requests), got["log"][-3000:]
    assert got["states"] & {1.0, 2.0}, got["states"]
    assert repaid == 0

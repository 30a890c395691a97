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
import hashlib
import json
import os
import socket
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from agents.debrief.sampledata import REQUESTS_FILE
from streams.settings import Settings
from streams.topics import ensure_topics
from tests.helpers import WorkerProcess, collect, produce, values
from tests.integration.test_judge_worker import GOOD, judge_settings, record
from tests.unit.agents.debrief.support import attending
from tests.unit.agents.judge.fixtures import disagreement
from tools.fakes.fake_anthropic import FakeAnthropic, Received, Reply

pytestmark = pytest.mark.integration

OUTAGE = float(os.environ.get("JUDGEFLOW_TEST_OUTAGE_SECONDS", "6"))
JOBS = 24
LLM = {"provider": "anthropic", "model": "claude-sonnet-5-5", "sdk_max_retries": 0,
       "deadline_seconds": 4.0, "backoff_base_seconds": 0.2, "requests_per_minute": 6000,
       "concurrency": 4, "max_attempts": 3, "breaker_backoff_seconds": 0.5,
       "breaker_backoff_max_seconds": 2.0}


def body_key(r: Received) -> str:
    return hashlib.sha256(json.dumps(r.body, sort_keys=True).encode()).hexdigest()


def double_paid(fake: FakeAnthropic) -> int:
    """Identical requests answered (HTTP 200, i.e. paid) more than once, beyond the first."""
    paid = Counter(body_key(r) for r in fake.message_requests() if r.status == 200)
    return sum(n - 1 for n in paid.values())


def garbled_then_good(body: dict[str, Any]) -> Reply:
    """A first answer that fails validation; the repair turn gets a good one."""
    if len(body.get("messages", [])) > 1:
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


def outage_run(name: str, settings: Settings, tmp_path: Path, fake: FakeAnthropic,
               out_topic: str, n: int, first: int) -> dict[str, Any]:
    """Run worker ``name``; once ``first`` outputs exist, an outage of OUTAGE seconds; then
    wait for ``n`` outputs. Returns the outputs, dead letters, states seen and timings."""
    port = free_port()
    s = settings.model_copy(update={"metrics_port": port})
    env = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.base_url}
    watch = BreakerWatch(port, name)
    watch.start()
    in_topic = {"judge": s.topics.judge_jobs, "debrief": s.topics.debrief_requests}[name]
    with WorkerProcess(name, s, tmp_path / f"{name}.log", env) as proc:
        asyncio.run(collect(s.kafka.bootstrap_servers, out_topic, until=first, timeout=60,
                            quiet=0))
        fake.outage = Reply.error(529)
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
            "recovered_s": recovered, "log": log}


def test_judge_outage_pauses_and_resumes_without_dead_letters_or_double_pay(
        bootstrap: str, tmp_path: Path) -> None:
    settings = judge_settings(bootstrap, tmp_path, llm=LLM)
    asyncio.run(ensure_topics(settings))
    jobs = [disagreement(job_id=f"job-outage-{i:02d}") for i in range(JOBS)]
    asyncio.run(produce(bootstrap, settings.topics.judge_jobs, [record(j) for j in jobs]))
    with FakeAnthropic(responder=garbled_then_good, latency=0.3) as fake:
        got = outage_run("judge", settings, tmp_path, fake, settings.topics.judge_results,
                         JOBS, first=4)
        repaid = double_paid(fake)
        refused = sum(r.status == 529 for r in fake.message_requests())
        if os.environ.get("OUTAGE_DEBUG"):
            print(got["log"][-6000:])
            print(Counter((len(r.body.get("messages", [])), r.status)
                          for r in fake.message_requests()))
            firsts: dict[str, list[Any]] = {}
            for r in fake.message_requests():
                if r.status == 200 and len(r.body["messages"]) == 1:
                    firsts.setdefault(json.dumps(r.body["messages"])[:3000], []).append(r.body)
            print("FIRSTS", len(firsts))
            import pathlib
            for i, r in enumerate(x for x in fake.message_requests() if len(x.body["messages"]) == 1):
                pathlib.Path(f"/tmp/po/body{i}.json").write_text(json.dumps(r.body, indent=1, sort_keys=True))
            for bodies in firsts.values():
                if len(bodies) > 1:
                    a, b = bodies[:2]
                    print("DIFF", [k for k in set(a) | set(b) if a.get(k) != b.get(k)])
    ids = Counter(r["job_id"] for r in got["out"])
    print(f"outage judge {OUTAGE:g}s: dead letters {len(got['dead'])}, double-paid {repaid}, "
          f"529s {refused}, results {len(ids)}/{JOBS}, recovered in "
          f"{got['recovered_s']:.1f}s, breaker states {sorted(got['states'])}")
    assert len(got["dead"]) == 0, got["log"][-3000:]
    assert ids == Counter(j.job_id for j in jobs), got["log"][-3000:]
    assert {r["status"] for r in got["out"]} == {"ok"}
    assert refused > 0  # the outage was real
    assert got["states"] & {1.0, 2.0} and 0.0 in got["states"], got["states"]
    assert got["lag"]
    assert repaid == 0, got["log"][-3000:]


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
        repaid = double_paid(fake)
    ids = Counter(e["request_id"] for e in got["out"])
    print(f"outage debrief {OUTAGE:g}s: dead letters {len(got['dead'])}, double-paid "
          f"{repaid}, evaluations {len(ids)}/{len(requests)}, breaker {sorted(got['states'])}")
    assert len(got["dead"]) == 0, got["log"][-3000:]
    assert ids == Counter(k.decode() for k, _ in requests), got["log"][-3000:]
    assert got["states"] & {1.0, 2.0}, got["states"]
    assert repaid == 0

"""Broker SIGKILL and restart under load (issue 8, Faults).

noida-db is a dev broker: it keeps everything in one JSON file written every ~2 s, so writes
it acknowledged shortly before a SIGKILL are lost (its loss, documented in operations). The
test waits until the broker has flushed every input, kills it while the workers are busy,
restarts it on the same port and data directory, and then counts: every judge job has a
result and every cell an outcome (our losses: zero), and the workers are still running."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from streams.topics import ensure_topics
from tests.helpers import collect, end_offsets, produce, values, worker
from tests.helpers import test_settings as make_settings
from tests.integration.sample import load_sample
from tests.integration.test_judge_worker import GOOD, judge_settings, record
from tests.unit.agents.judge.fixtures import disagreement
from tools.broker import EmbeddedBroker
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

pytestmark = pytest.mark.integration


def flushed(data_dir: Path, ends: dict[str, dict[int, int]]) -> bool:
    """Does the broker's data file hold every record up to ``ends`` (topic -> partition ->
    end offset)?"""
    try:
        data = orjson.loads((data_dir / "kafka.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return False  # not written yet, or caught mid-write
    topics = dict(data["topics"])
    for topic, parts in ends.items():
        stored = dict(topics.get(topic, {}).get("partitions", []))
        for p, end in parts.items():
            if stored.get(p, {}).get("high_watermark", -1) < end:
                return False
    return True


def wait_for(cond: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(cond) and cond():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def kill_broker(b: EmbeddedBroker) -> None:
    assert b.process is not None
    os.killpg(b.process.pid, signal.SIGKILL)
    b.process.wait(timeout=10)
    b.process = None


def test_workers_ride_out_a_broker_sigkill_and_lose_nothing(tmp_path: Path) -> None:
    data_dir = tmp_path / "broker"
    with EmbeddedBroker(data_dir=data_dir) as b:
        bootstrap = b.bootstrap
        s = judge_settings(bootstrap, tmp_path, llm={"concurrency": 4, "deadline_seconds": 30.0})
        d = make_settings(bootstrap)  # detect: the sample skill, its own topics
        asyncio.run(ensure_topics(s))
        asyncio.run(ensure_topics(d))
        sample = load_sample()
        cells = sorted(sample.truth)
        before, after = set(cells[: len(cells) // 2]), set(cells[len(cells) // 2:])
        jobs = [disagreement(job_id=f"job-restart-{i:03d}") for i in range(40)]
        asyncio.run(produce(bootstrap, s.topics.judge_jobs, [record(j) for j in jobs]))
        asyncio.run(produce(bootstrap, d.topics.agent_answers, sample.by_cells(before)))
        # The fake answers 8 calls, then holds every call until the broker is back: the
        # judge is mid-job (LLM calls in flight, results to publish) during the outage, and
        # nothing is written in the broker's unflushed window before the kill.
        gate, calls = threading.Event(), itertools.count()

        def responder(body: dict[str, Any]) -> Reply:
            if next(calls) >= 8:
                gate.wait(60)
            return Reply.message(text=json.dumps(GOOD))

        with FakeAnthropic(responder=responder) as fake:
            env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test"}
            with worker("judge", s, tmp_path, extra_env=env) as judge, \
                    worker("detect", d, tmp_path) as detect:
                asyncio.run(collect(bootstrap, s.topics.judge_results, until=8, timeout=60,
                                    quiet=0))
                asyncio.run(collect(bootstrap, d.topics.cell_outcomes, timeout=60, quiet=0,
                                    done=lambda rs: len({r.key for r in rs}) >= len(before)))
                topics = (s.topics.judge_jobs, s.topics.judge_results,
                          d.topics.agent_answers, d.topics.cell_outcomes)
                ends = {t: asyncio.run(end_offsets(bootstrap, t)) for t in topics}
                wait_for(lambda: flushed(data_dir, ends), 30, "the broker to flush")
                kill_broker(b)
                b.start()  # same port, same data directory
                gate.set()
                asyncio.run(produce(bootstrap, d.topics.agent_answers, sample.by_cells(after)))
                results = values(asyncio.run(collect(
                    bootstrap, s.topics.judge_results, timeout=60, quiet=1.0,
                    done=lambda rs: len({orjson.loads(r.value)["job_id"] for r in rs})
                    >= len(jobs))))
                outcomes = asyncio.run(collect(
                    bootstrap, d.topics.cell_outcomes, timeout=60, quiet=1.0,
                    done=lambda rs: len({r.key for r in rs}) >= len(sample.truth)))
                logs = judge.log_text()[-3000:] + detect.log_text()[-3000:]
                assert judge.alive, judge.log_text()[-3000:]
                assert detect.alive, detect.log_text()[-3000:]
    lost_jobs = {j.job_id for j in jobs} - {r["job_id"] for r in results}
    assert not lost_jobs, (len(lost_jobs), logs)
    decided = {v["task_id"] + "|" + v["patient_id"] + "|" + v["field_id"]
               for v in values(outcomes)}
    assert decided == set(sample.truth), (len(set(sample.truth) - decided), logs)

"""Broker failover on a 3-node Apache Kafka KRaft cluster on loopback (replication factor 3,
``min.insync.replicas`` 2, the workers' idempotent acks=all producers), while jobs keep
arriving:

* SIGKILL the leader of the input partition, restart it; SIGKILL the leader of the output
  partition, restart it; then a rolling restart (graceful) of all three nodes;
* a judge worker cut off from every broker for 30 s (loopback TCP proxies it reaches the
  cluster through, stopped and started again) recovers by itself;
* the four workers start while a node has just been SIGKILLed and work with it down, then
  the debrief worker rides SIGKILLs of its input's and output's leaders (issue 25).

Counted: records in, results out, duplicates, LLM calls paid twice (the fake Anthropic API
sees every call). Asserted: 0 lost, exactly one result per job per prompt version, 0
double-paid calls, the worker alive throughout.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agents.debrief.sampledata import load_requests
from agents.settings import Settings
from schemas.chart_review import JudgeJob
from streams.sampledata import DATA_DIR
from streams.topics import ensure_topics, send_all
from tests.helpers import WorkerProcess, collect, values, worker
from tests.helpers import test_settings as make_settings
from tests.integration.test_judge_worker import GOOD, judge_settings, record
from tests.kafka import apache_kafka_or_skip
from tests.unit.agents.debrief.support import attending
from tests.unit.agents.judge.fixtures import disagreement
from tools.fakes.fake_anthropic import FakeAnthropic, Reply
from tools.kafka import ApacheKafka

# A 3-node cluster, leader kills, a rolling restart and a 30 s cut: minutes, not seconds.
pytestmark = [pytest.mark.integration, pytest.mark.slow]

TAG = re.compile(r"failover-job-\d+")
LLM = {"concurrency": 4, "deadline_seconds": 30.0}
KAFKA = {"replication_factor": 3, "partitions": 3}
SAMPLE_REQUESTS = load_requests()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApacheKafka]:
    with apache_kafka_or_skip(brokers=3, proxied=True,
                              work_dir=tmp_path_factory.mktemp("kafka3")) as k:
        print(f"3-node cluster up in {k.startup_seconds:.1f}s")
        yield k


def tagged_job(i: int) -> JudgeJob:
    base = disagreement(job_id=f"job-failover-{i:04d}")
    first = base.answers[0].model_copy(update={"rationale": f"failover-job-{i:04d}"})
    return base.model_copy(update={"answers": (first, *base.answers[1:])})


#: one input of a feeder: (its id, its (key, value) record)
Make = Callable[[int], tuple[str, tuple[bytes, bytes]]]


def judge_input(i: int) -> tuple[str, tuple[bytes, bytes]]:
    job = tagged_job(i)
    return job.job_id, record(job)


class Feeder(threading.Thread):
    """Produces inputs (``make(i)``) in batches of 4 at a steady pace through its own
    idempotent producer until stopped (at least ``minimum``), so records keep arriving while
    nodes die. ``ids`` are the ids of what it sent."""

    def __init__(self, bootstrap: str, topic: str, first: int, per_second: float,
                 minimum: int = 0, make: Make = judge_input) -> None:
        super().__init__(daemon=True)
        self.bootstrap, self.topic, self.first, self.make = bootstrap, topic, first, make
        self.pause, self.minimum = 4 / per_second, minimum
        self.ids: list[str] = []
        self.error: BaseException | None = None
        self._halt = threading.Event()

    def run(self) -> None:
        try:
            while not self._halt.is_set() or len(self.ids) < self.minimum:
                n = self.first + len(self.ids)
                batch = [self.make(i) for i in range(n, n + 4)]
                asyncio.run(send_all(self.bootstrap, self.topic, [r for _, r in batch]))
                self.ids += [i for i, _ in batch]
                time.sleep(self.pause)
        except BaseException as exc:  # reported by the test
            self.error = exc

    def finish(self) -> list[str]:
        self._halt.set()
        self.join(timeout=180)
        assert self.error is None, repr(self.error)
        return self.ids


def paced(body: dict[str, Any]) -> Reply:
    time.sleep(0.05)  # a model takes a moment: calls are in flight when a node dies
    return Reply.message(text=json.dumps(GOOD))


def count_results(k: ApacheKafka, s: Settings, topic: str | None = None) -> int:
    return len(asyncio.run(collect(k.bootstrap, topic or s.topics.judge_results, timeout=5,
                                   quiet=0.3)))


def grown(k: ApacheKafka, s: Settings, more: int, topic: str | None = None
          ) -> Callable[[], bool]:
    """A condition: ``more`` results (on ``topic``, judge results by default) beyond those
    on the topic now."""
    base = count_results(k, s, topic)
    return lambda: count_results(k, s, topic) >= base + more


def wait_until(cond: Callable[[], bool], timeout: float, what: str,
               *procs: WorkerProcess) -> None:
    """Until ``cond()``; every worker of ``procs`` must stay alive meanwhile."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for proc in procs:
            assert proc.alive, f"{proc.name} {proc.exit_reason()}\n{proc.log_text()[-3000:]}"
        if cond():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}\n"
                         + "\n".join(p.log_text()[-3000:] for p in procs))


def tally(k: ApacheKafka, topic: str, id_field: str, ids: list[str], tag: re.Pattern[str],
          fake: FakeAnthropic, proc: WorkerProcess) -> dict[str, int]:
    """Lost, duplicate and double-paid figures of the inputs ``ids`` (their outputs on
    ``topic`` name them in ``id_field``; ``tag`` finds an input in a model call's body)."""
    want = set(ids)
    results = values(asyncio.run(collect(
        k.bootstrap, topic, timeout=120, quiet=3.0,
        done=lambda rs: {json.loads(r.value)[id_field] for r in rs} >= want)))
    per_version = Counter((r[id_field], r["prompt_version"]) for r in results)
    paid = Counter(m.group(0) for r in fake.message_requests()
                   for m in [tag.search(json.dumps(r.body))] if m)
    figures = {"records_in": len(ids), "results_out": len(results),
               "lost": len(want - {r[id_field] for r in results}),
               "duplicates": sum(n - 1 for n in per_version.values()),
               "double_paid": sum(n - 1 for n in paid.values()),
               "unpaid": len(want) - len(paid)}
    assert proc.alive, proc.log_text()[-3000:]
    return figures


def test_leader_kills_and_a_rolling_restart_lose_nothing_and_pay_nothing_twice(
        cluster: ApacheKafka, tmp_path: Path) -> None:
    k = cluster
    s = judge_settings(k.bootstrap, tmp_path, llm=LLM, kafka=KAFKA)
    asyncio.run(ensure_topics(s))
    events: list[str] = []
    with FakeAnthropic(responder=paced) as fake:
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test"}
        with worker("judge", s, tmp_path, extra_env=env) as judge:
            feeder = Feeder(k.bootstrap, s.topics.judge_jobs, 0, per_second=5)
            feeder.start()
            for topic in (s.topics.judge_jobs, s.topics.judge_results):
                wait_until(grown(k, s, 10), 120, "results before the kill", judge)
                victim = k.leader(topic, 0)
                k.kill(victim)
                events.append(f"SIGKILLed node {victim} (leader of {topic.split('.', 1)[1]}-0)")
                wait_until(grown(k, s, 5), 120, "results while a node is down", judge)
                k.start(victim)
                k.wait_in_sync()
            before = count_results(k, s)
            for i in range(k.brokers):
                k.restart(i)
                k.wait_in_sync()
            events.append(f"rolling restart: {count_results(k, s) - before} results meanwhile")
            jobs = feeder.finish()
            figures = tally(k, s.topics.judge_results, "job_id", jobs, TAG, fake, judge)
    print(f"failover: {'; '.join(events)}; {figures}")
    assert "rolling restart: 0 results" not in events[-1], "the stream ended before the roll"
    assert figures["lost"] == figures["duplicates"] == figures["double_paid"] == 0, figures
    assert figures["unpaid"] == 0, figures


def test_a_worker_cut_off_for_30s_recovers_by_itself(cluster: ApacheKafka,
                                                      tmp_path: Path) -> None:
    k = cluster
    s = judge_settings(k.proxied_bootstrap, tmp_path, llm=LLM, kafka=KAFKA)
    direct = s.model_copy(update={"kafka": s.kafka.model_copy(
        update={"bootstrap_servers": k.bootstrap})})
    asyncio.run(ensure_topics(direct))
    with FakeAnthropic(responder=paced) as fake:
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test"}
        with worker("judge", s, tmp_path, extra_env=env) as judge:
            feeder = Feeder(k.bootstrap, s.topics.judge_jobs, 100_000, per_second=4,
                            minimum=80)
            feeder.start()
            wait_until(lambda: count_results(k, s) >= 10, 120, "results before the cut",
                       judge)
            k.cut()
            cut_at, during = time.monotonic(), count_results(k, s)
            # the cut itself is the scenario: 30 s in which the worker reaches no broker
            wait_until(lambda: time.monotonic() - cut_at >= 30, 60, "the 30 s cut", judge)
            stalled = count_results(k, s)
            k.restore()
            restored = time.monotonic()
            wait_until(grown(k, s, 1), 120, "a result after the cut", judge)
            recovery = time.monotonic() - restored
            jobs = feeder.finish()
            figures = tally(k, s.topics.judge_results, "job_id", jobs, TAG, fake, judge)
    print(f"cut-off 30 s: results during the cut {stalled - during}, first result "
          f"{recovery:.1f}s after the restore; {figures}")
    assert stalled - during <= LLM["concurrency"], "the cut did not cut the worker off"
    assert figures["lost"] == figures["duplicates"] == figures["double_paid"] == 0, figures


DEBRIEF_TAG = re.compile(r"req-failover-\d+")
DEBRIEF_LLM = {"provider": "anthropic", "model": "claude-sonnet-5-5", "sdk_max_retries": 0,
               "deadline_seconds": 30.0, "backoff_base_seconds": 0.05,
               "requests_per_minute": 6000, "concurrency": 4}
PATIENT = "P001"


def debrief_input(i: int) -> tuple[str, tuple[bytes, bytes]]:
    """A sample debrief request under a new id (the samples in turn)."""
    sample = SAMPLE_REQUESTS[i % len(SAMPLE_REQUESTS)]
    rid = f"req-failover-{i:04d}"
    return rid, (rid.encode(), sample.model_copy(update={"request_id": rid})
                 .model_dump_json().encode())


def paced_attending(body: dict[str, Any]) -> Reply:
    time.sleep(0.05)  # calls in flight when a node dies
    return attending(body)


def sample_inputs(name: str) -> list[tuple[bytes, bytes]]:
    """One patient's sample answers or adjudications, keyed by cell."""
    out = []
    for line in (DATA_DIR / name).read_bytes().splitlines():
        rec = json.loads(line)
        if rec["patient_id"] == PATIENT:
            out.append((rec.get("cell", f"{rec['task_id']}|{PATIENT}|{rec['field_id']}")
                        .encode(), line))
    return out


def calibrated(k: ApacheKafka, s: Settings) -> Callable[[], bool]:
    return lambda: any(json.loads(r.value)["cells_adjudicated"] for r in asyncio.run(
        collect(k.bootstrap, s.topics.calibration, timeout=5, quiet=0.3)))


def test_every_worker_starts_with_a_broker_down_and_debrief_rides_leader_kills(
        cluster: ApacheKafka, tmp_path: Path) -> None:
    """Issue 25: the four workers start while one node of three has just crashed (SIGKILL:
    until its session expires the cluster's metadata still names it, and a request sent to
    it fails: the window in which a worker's start-up died of NodeNotReadyError), and work
    with it down; then debrief (the paid path: journal, ledger) keeps working while the
    leaders of its input and output partitions are SIGKILLed in turn."""
    k = cluster
    s = make_settings(k.bootstrap, kafka=KAFKA)
    paid = s.model_copy(update={"llm": s.llm.model_copy(update=DEBRIEF_LLM)})
    t = s.topics
    asyncio.run(ensure_topics(s))
    asyncio.run(send_all(k.bootstrap, t.agent_answers, sample_inputs("answers.jsonl")))
    asyncio.run(send_all(k.bootstrap, t.adjudications, sample_inputs("adjudications.jsonl")))
    asyncio.run(send_all(k.bootstrap, t.debrief_requests, [debrief_input(i)[1]
                                                             for i in range(4)]))
    events: list[str] = []
    with FakeAnthropic(responder=paced_attending) as fake:
        env = {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test"}
        down = k.leader(t.debrief_requests, 0)
        k.kill(down)
        with worker("detect", s, tmp_path) as detect, worker("judge", s, tmp_path) as judge, \
                worker("calibrate", s, tmp_path) as calibrate, \
                worker("debrief", paid, tmp_path, extra_env=env) as debrief:
            every = (detect, judge, calibrate, debrief)
            wait_until(lambda: count_results(k, s, t.case_evaluations) >= 4, 120,
                       "debrief evaluations", *every)
            wait_until(lambda: count_results(k, s) >= 1, 120, "detect's jobs judged", *every)
            wait_until(calibrated(k, s), 120, "a calibration", *every)
            events.append(f"4 workers started and worked with node {down} down")
            k.start(down)
            k.wait_in_sync()
            for proc in (detect, judge, calibrate):
                proc.stop()
            feeder = Feeder(k.bootstrap, t.debrief_requests, 4, per_second=5,
                            make=debrief_input)
            feeder.start()
            for topic in (t.debrief_requests, t.case_evaluations):
                wait_until(grown(k, s, 10, t.case_evaluations), 120, "evaluations", debrief)
                victim = k.leader(topic, 0)
                k.kill(victim)
                events.append(f"SIGKILLed node {victim} (leader of {topic.split('.', 1)[1]}-0)")
                wait_until(grown(k, s, 5, t.case_evaluations), 120,
                           "evaluations while a node is down", debrief)
                k.start(victim)
                k.wait_in_sync()
            ids = [debrief_input(i)[0] for i in range(4)] + feeder.finish()
            figures = tally(k, t.case_evaluations, "request_id", ids, DEBRIEF_TAG, fake,
                            debrief)
    print(f"failover (all workers): {'; '.join(events)}; debrief {figures}")
    assert figures["lost"] == figures["duplicates"] == figures["double_paid"] == 0, figures
    assert figures["unpaid"] == 0, figures

"""Broker failover on a 3-node Apache Kafka KRaft cluster on loopback (replication factor 3,
``min.insync.replicas`` 2, the workers' idempotent acks=all producers), while jobs keep
arriving:

* SIGKILL the leader of the input partition, restart it; SIGKILL the leader of the output
  partition, restart it; then a rolling restart (graceful) of all three nodes;
* a judge worker cut off from every broker for 30 s (loopback TCP proxies it reaches the
  cluster through, stopped and started again) recovers by itself.

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

from agents.settings import Settings
from schemas.chart_review import JudgeJob
from streams.topics import ensure_topics, send_all
from tests.helpers import WorkerProcess, collect, values, worker
from tests.integration.test_judge_worker import GOOD, judge_settings, record
from tests.kafka import apache_kafka_or_skip, use_broker
from tests.unit.agents.judge.fixtures import disagreement
from tools.fakes.fake_anthropic import FakeAnthropic, Reply
from tools.kafka import ApacheKafka

# A 3-node cluster, leader kills, a rolling restart and a 30 s cut: minutes, not seconds.
pytestmark = [pytest.mark.integration, pytest.mark.slow]

TAG = re.compile(r"failover-job-\d+")
LLM = {"concurrency": 4, "deadline_seconds": 30.0}
KAFKA = {"replication_factor": 3, "partitions": 3}


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


class Feeder(threading.Thread):
    """Produces tagged jobs in batches of 4 at a steady pace through its own idempotent
    producer until stopped (at least ``minimum``), so records keep arriving while nodes
    die. ``jobs`` is what it sent."""

    def __init__(self, bootstrap: str, topic: str, first: int, per_second: float,
                 minimum: int = 0) -> None:
        super().__init__(daemon=True)
        self.bootstrap, self.topic, self.first = bootstrap, topic, first
        self.pause, self.minimum = 4 / per_second, minimum
        self.jobs: list[JudgeJob] = []
        self.error: BaseException | None = None
        self._halt = threading.Event()

    def run(self) -> None:
        try:
            while not self._halt.is_set() or len(self.jobs) < self.minimum:
                n = self.first + len(self.jobs)
                batch = [tagged_job(i) for i in range(n, n + 4)]
                asyncio.run(send_all(self.bootstrap, self.topic, [record(j) for j in batch]))
                self.jobs += batch
                time.sleep(self.pause)
        except BaseException as exc:  # reported by the test
            self.error = exc

    def finish(self) -> list[JudgeJob]:
        self._halt.set()
        self.join(timeout=180)
        assert self.error is None, repr(self.error)
        return self.jobs


def paced(body: dict[str, Any]) -> Reply:
    time.sleep(0.05)  # a model takes a moment: calls are in flight when a node dies
    return Reply.message(text=json.dumps(GOOD))


def count_results(k: ApacheKafka, s: Settings) -> int:
    return len(asyncio.run(collect(k.bootstrap, s.topics.judge_results, timeout=5, quiet=0.3)))


def grown(k: ApacheKafka, s: Settings, more: int) -> Callable[[], bool]:
    """A condition: ``more`` results beyond those on the topic now."""
    base = count_results(k, s)
    return lambda: count_results(k, s) >= base + more


def wait_until(cond: Callable[[], bool], timeout: float, what: str,
               judge: WorkerProcess) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert judge.alive, judge.log_text()[-3000:]
        if cond():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}\n{judge.log_text()[-3000:]}")


def tally(k: ApacheKafka, s: Settings, jobs: list[JudgeJob], fake: FakeAnthropic,
          judge: WorkerProcess) -> dict[str, int]:
    want = {j.job_id for j in jobs}
    results = values(asyncio.run(collect(
        k.bootstrap, s.topics.judge_results, timeout=120, quiet=3.0,
        done=lambda rs: {json.loads(r.value)["job_id"] for r in rs} >= want)))
    per_version = Counter((r["job_id"], r["prompt_version"]) for r in results)
    paid = Counter(m.group(0) for r in fake.message_requests()
                   for m in [TAG.search(json.dumps(r.body))] if m)
    figures = {"records_in": len(jobs), "results_out": len(results),
               "lost": len(want - {r["job_id"] for r in results}),
               "duplicates": sum(n - 1 for n in per_version.values()),
               "double_paid": sum(n - 1 for n in paid.values()),
               "unpaid": len(want) - len(paid)}
    assert judge.alive, judge.log_text()[-3000:]
    return figures


def test_leader_kills_and_a_rolling_restart_lose_nothing_and_pay_nothing_twice(
        cluster: ApacheKafka, tmp_path: Path) -> None:
    k = cluster
    use_broker("apache", k.bootstrap)
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
            figures = tally(k, s, jobs, fake, judge)
    print(f"failover: {'; '.join(events)}; {figures}")
    assert "rolling restart: 0 results" not in events[-1], "the stream ended before the roll"
    assert figures["lost"] == figures["duplicates"] == figures["double_paid"] == 0, figures
    assert figures["unpaid"] == 0, figures


def test_a_worker_cut_off_for_30s_recovers_by_itself(cluster: ApacheKafka,
                                                      tmp_path: Path) -> None:
    k = cluster
    use_broker("apache", k.proxied_bootstrap)
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
            figures = tally(k, s, jobs, fake, judge)
    print(f"cut-off 30 s: results during the cut {stalled - during}, first result "
          f"{recovery:.1f}s after the restore; {figures}")
    assert stalled - during <= LLM["concurrency"], "the cut did not cut the worker off"
    assert figures["lost"] == figures["duplicates"] == figures["double_paid"] == 0, figures

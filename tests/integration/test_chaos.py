"""Chaos: SIGKILL each worker (detect, judge, debrief) at random points under load, restart
it, and count what was lost, duplicated and paid twice. Loopback only (the session broker and
fake Anthropic servers on 127.0.0.1), bounded by its timeouts, seeded (the seed is printed on
failure).

What the design guarantees, and so what is asserted:
* lost: zero, for every worker (offsets commit only after outputs are acknowledged);
* duplicates: allowed only as records with the same id (at-least-once; consumers dedupe by
  id): each job has exactly one result id, each request one evaluation id, each decision one
  outcome id;
* double-paid: every answer is kept in the LLM journal before it is used, so an answer that
  was received is never paid again (tests/integration/test_paid_once.py asserts 0). What a
  kill can still cost is a request whose answer was written by the API but never read (it
  was in flight at the kill): re-paid calls (answered twice) are bounded by the calls in
  flight at the kills (kills x concurrency); the measured number is reported.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest

from agents.debrief.sampledata import REQUESTS_FILE
from schemas.skill import load_skill
from streams.topics import ensure_topics
from tests.helpers import WorkerProcess, collect, end_offsets, produce, values
from tests.helpers import test_settings as make_settings
from tests.integration.sample import load_sample, reference_jobs
from tests.integration.test_judge_worker import GOOD, judge_settings, record
from tests.unit.agents.debrief.support import attending, request_in
from tests.unit.agents.judge.fixtures import disagreement
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

pytestmark = pytest.mark.integration

KILLS = 2  # per worker
JOBS = 48
LLM = {"provider": "anthropic", "model": "claude-sonnet-5-5", "sdk_max_retries": 0,
       "deadline_seconds": 20.0, "backoff_base_seconds": 0.05, "requests_per_minute": 6000,
       "concurrency": 4}
TAG = re.compile(r"chaos-job-\d+")


def chaos_job(i: int) -> Any:
    base = disagreement(job_id=f"job-chaos-{i:03d}")
    first = base.answers[0].model_copy(update={"rationale": f"chaos-job-{i:03d}"})
    return base.model_copy(update={"answers": (first, *base.answers[1:])})


class Victim:
    """One worker under fire: restarted after each SIGKILL, killed when its output topic
    has grown past the next random threshold."""

    def __init__(self, name: str, settings: Any, tmp: Path, env: dict[str, str],
                 out_topic: str, total: int, rng: random.Random) -> None:
        self.name, self.settings, self.tmp, self.env = name, settings, tmp, env
        self.out_topic = out_topic
        self.thresholds = sorted(rng.sample(range(1, max(total, KILLS + 2)), KILLS))
        self.kills = 0
        self.proc = self._start()

    def _start(self) -> WorkerProcess:
        return WorkerProcess(self.name, self.settings,
                             self.tmp / f"{self.name}-{self.kills}.log", self.env)

    def poke(self, produced: int) -> None:
        if self.kills < KILLS and produced >= self.thresholds[self.kills]:
            self.proc.kill()  # SIGKILL
            self.kills += 1
            self.proc = self._start()

    def logs(self) -> str:
        return "".join(p.read_text(errors="replace")[-1500:]
                       for p in sorted(self.tmp.glob(f"{self.name}-*.log")))


async def produced(bootstrap: str, topic: str) -> int:
    return sum((await end_offsets(bootstrap, topic)).values())


def test_chaos_kills_lose_nothing(bootstrap: str, tmp_path: Path) -> None:
    seed = int(os.environ.get("CHAOS_SEED", time.time_ns() % 10_000))
    rng = random.Random(seed)
    sample = load_sample()
    d = make_settings(bootstrap)
    j = judge_settings(bootstrap, tmp_path, llm=LLM)
    b = make_settings(bootstrap, llm=LLM)
    for s in (d, j, b):
        asyncio.run(ensure_topics(s))
    jobs = [chaos_job(i) for i in range(JOBS)]
    requests = REQUESTS_FILE.read_bytes().splitlines()
    asyncio.run(produce(bootstrap, j.topics.judge_jobs, [record(x) for x in jobs]))
    asyncio.run(produce(bootstrap, b.topics.debrief_requests,
                        [(orjson.loads(r)["request_id"].encode(), r) for r in requests]))
    asyncio.run(produce(bootstrap, d.topics.agent_answers, sample.answers))
    judge_reply = Reply.message(text=json.dumps(GOOD))
    with FakeAnthropic(responder=lambda body: judge_reply, latency=0.3) as jfake, \
            FakeAnthropic(responder=attending, latency=0.6) as bfake:
        env = {"ANTHROPIC_API_KEY": "test"}
        victims = [
            Victim("detect", d, tmp_path, {}, d.topics.cell_outcomes, len(sample.truth), rng),
            Victim("judge", j, tmp_path, {**env, "ANTHROPIC_BASE_URL": jfake.base_url},
                   j.topics.judge_results, JOBS, rng),
            Victim("debrief", b, tmp_path, {**env, "ANTHROPIC_BASE_URL": bfake.base_url},
                   b.topics.case_evaluations, len(requests), rng)]
        try:
            deadline = time.monotonic() + 90
            while any(v.kills < KILLS for v in victims) and time.monotonic() < deadline:
                for v in victims:
                    v.poke(asyncio.run(produced(bootstrap, v.out_topic)))
                time.sleep(0.2)
            kills = {v.name: v.kills for v in victims}
            results = values(asyncio.run(collect(
                bootstrap, j.topics.judge_results, timeout=60, quiet=1.0,
                done=lambda rs: len({orjson.loads(r.value)["job_id"] for r in rs}) >= JOBS)))
            evaluations = values(asyncio.run(collect(
                bootstrap, b.topics.case_evaluations, timeout=60, quiet=1.0,
                done=lambda rs: len({r.key for r in rs}) >= len(requests))))
            outcomes = values(asyncio.run(collect(
                bootstrap, d.topics.cell_outcomes, timeout=60, quiet=1.0,
                done=lambda rs: len({r.key for r in rs}) >= len(sample.truth))))
            det_jobs = values(asyncio.run(collect(bootstrap, d.topics.judge_jobs, timeout=10,
                                                  quiet=1.0)))
            alive = {v.name: v.proc.alive for v in victims}
            logs = "".join(v.logs() for v in victims)
        finally:
            for v in victims:
                v.proc.kill()
        judge_paid = Counter(m.group(0) for r in jfake.message_requests() if r.status == 200
                             for m in [TAG.search(json.dumps(r.body))] if m)
        # a request cut off by a kill never reached the model (the fake could not parse it)
        debrief_paid = Counter(request_in(r.body).request_id for r in bfake.message_requests()
                               if "messages" in r.body and r.status == 200)
    ctx = f"seed={seed} kills={kills}\n{logs[-4000:]}"
    assert kills == {"detect": KILLS, "judge": KILLS, "debrief": KILLS}, ctx
    assert all(alive.values()), (alive, ctx)
    # lost: zero
    lost_results = {x.job_id for x in jobs} - {r["job_id"] for r in results}
    lost_evals = {orjson.loads(r)["request_id"] for r in requests} - {
        e["request_id"] for e in evaluations}
    cell = [f"{o['task_id']}|{o['patient_id']}|{o['field_id']}" for o in outcomes]
    lost_cells = set(sample.truth) - set(cell)
    ref = reference_jobs(sample, load_skill(d.skill_dir), d.expected_agents,
                         d.low_confidence_threshold)
    lost_jobs = set().union(*ref.values()) - {x["job_id"] for x in det_jobs}
    lost = {"results": len(lost_results), "evaluations": len(lost_evals),
            "cells": len(lost_cells), "detect_jobs": len(lost_jobs)}
    # duplicates: by id, each id has one content
    dup = {"results": len(results) - len({r["job_id"] for r in results}),
           "evaluations": len(evaluations) - len({e["request_id"] for e in evaluations}),
           "detect_jobs": len(det_jobs) - len({x["job_id"] for x in det_jobs})}
    repaid = {"judge": sum(n - 1 for n in judge_paid.values()),
              "debrief": sum(n - 1 for n in debrief_paid.values())}
    print(f"chaos seed={seed} kills={kills} lost={lost} duplicates={dup} double_paid={repaid}")
    assert lost == dict.fromkeys(lost, 0), (lost, ctx)
    assert all(len({r["result_id"] for r in results if r["job_id"] == x.job_id}) == 1
               for x in jobs), ctx
    assert all(len({e["evaluation_id"] for e in evaluations if e["request_id"] == rid}) == 1
               for rid in {e["request_id"] for e in evaluations}), ctx
    # every job and request was paid for at least once, and re-paid only for calls in
    # flight at a kill
    assert set(judge_paid) == {f"chaos-job-{i:03d}" for i in range(JOBS)}
    assert repaid["judge"] <= KILLS * LLM["concurrency"], (repaid, ctx)
    # a debrief request may take two calls (one repair round-trip); re-paid ones are bounded
    assert repaid["debrief"] <= KILLS * LLM["concurrency"] * 2, (repaid, ctx)

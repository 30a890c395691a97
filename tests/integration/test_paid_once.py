"""Never pay twice: a SIGKILL while answers are paid but their results not yet published
re-pays nothing, for the live judge, the live debrief worker and ``replay judge``; a
SIGKILL with calls in flight re-pays each of those calls once, and the worker says so.

Deterministic: every input needs a second call (the first answer is unusable: a judge
answer that fails validation, a debrief reply without the tool call), and the fake holds
every second call unanswered. The first call's answer was journaled (and acknowledged)
before the second one is sent, so once the fake has seen every input's second call the
worker is killed with all first answers paid and no result published. After the restart
(the fake answering normally) every input gets its result and no first call is paid again;
the held second calls were never answered, so nothing was paid for them (the honest
"in flight at the kill" figure is the number of those, reported).

The Messages API documents no idempotency key (and the SDK sends none for it), so a call in
flight at a kill cannot be claimed back: its answer is billed (the fake marks it ``billed``
once generated, even into a dead socket) and the restarted worker pays for it again. The
kill test measures that cost: at most one call per job in flight per kill, so at most
``llm.concurrency`` calls per worker per kill; the journal's "call sent" mark lets the
restarted worker count every one of them (log line; ``judgeflow_llm_resent_calls_total``).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from agents.debrief.sampledata import REQUESTS_FILE
from agents.settings import Settings
from streams.topics import ensure_topics
from tests.helpers import WorkerProcess, collect, produce, values
from tests.helpers import test_settings as make_settings
from tests.integration.test_judge_worker import GOOD, judge_settings, record
from tests.integration.test_llm_outage import job_tag, request_tag, tagged_job
from tests.unit.agents.debrief.support import attending
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

pytestmark = pytest.mark.integration

LLM = {"provider": "anthropic", "model": "claude-sonnet-5-5", "sdk_max_retries": 0,
       "deadline_seconds": 60.0, "backoff_base_seconds": 0.05, "requests_per_minute": 6000,
       "concurrency": 4, "max_attempts": 2}


class HoldSecondCalls:
    """First calls get ``first``; second calls wait (unanswered) until ``release`` is set,
    then get ``second``."""

    def __init__(self, first: Callable[[dict[str, Any]], Reply],
                 second: Callable[[dict[str, Any]], Reply]) -> None:
        self.first, self.second = first, second
        self.release = threading.Event()
        self.held = 0
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        if len(body.get("messages", [])) == 1:
            return self.first(body)
        if not self.release.is_set():
            with self._lock:
                self.held += 1
            return Reply(status=503, body={"type": "error", "error": {
                "type": "api_error", "message": "held"}}, delay=3600)
        return self.second(body)


def first_calls_paid(fake: FakeAnthropic, ident: Callable[[dict[str, Any]], str]) -> Counter[str]:
    return Counter(ident(r.body) for r in fake.message_requests()
                   if r.status == 200 and len(r.body.get("messages", [])) == 1)


def kill_and_restart(start: Callable[[str, dict[str, str]], WorkerProcess],
                     hold: HoldSecondCalls, inputs: int, out: tuple[str, str],
                     done: Callable[[list[Any]], bool], ident: Callable[[dict[str, Any]], str]
                     ) -> tuple[list[Any], str, Counter[str], int]:
    """Start a worker against a fake holding every second call, SIGKILL it once the held
    calls are in, restart it with the calls released; returns what it published, the second
    run's log, the first calls paid per input and the calls in flight at the kill."""
    with FakeAnthropic(responder=hold) as fake:
        env = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.base_url}
        proc = start("1", env)
        try:
            deadline = time.monotonic() + 90
            while hold.held < min(inputs, LLM["concurrency"]) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert hold.held >= min(inputs, LLM["concurrency"]), proc.log_text()[-3000:]
        finally:
            proc.kill()  # SIGKILL: first answers paid, second calls held, nothing published
        hold.release.set()
        second = start("2", env)
        try:
            got = asyncio.run(collect(out[0], out[1], timeout=120, quiet=1.0, done=done))
            log = second.log_text()
        finally:
            second.kill()
        in_flight = sum(1 for r in fake.message_requests() if r.status == 0)
        return got, log, first_calls_paid(fake, ident), in_flight


@pytest.mark.parametrize(("worker", "argv"), [("judge", ()),
                                              ("replay", ("cli.main", "replay", "judge"))],
                         ids=["live", "replay"])
def test_judge_killed_with_paid_answers_pays_none_again(bootstrap: str, tmp_path: Path,
                                                       worker: str, argv: tuple[str, ...]
                                                       ) -> None:
    """The live judge and ``replay judge`` share the journal: neither pays a first call twice."""
    s = judge_settings(bootstrap, tmp_path, llm=LLM)
    asyncio.run(ensure_topics(s))
    jobs = [tagged_job(i) for i in range(8)]
    asyncio.run(produce(bootstrap, s.topics.judge_jobs, [record(j) for j in jobs]))
    hold = HoldSecondCalls(lambda b: Reply.message(text='{"verdict": "yes"}'),
                           lambda b: Reply.message(text=json.dumps(GOOD)))
    results, log, paid, in_flight = kill_and_restart(
        lambda tag, env: WorkerProcess(worker, s, tmp_path / f"{worker}-{tag}.log", env, argv),
        hold, len(jobs), (bootstrap, s.topics.judge_results),
        lambda rs: len({orjson.loads(r.value)["job_id"] for r in rs}) >= len(jobs), job_tag)
    twice = sum(n - 1 for n in paid.values())
    print(f"kill {worker} judge: first calls paid twice {twice}, held (in flight at the kill, "
          f"never answered) {in_flight}")
    assert Counter(r["job_id"] for r in values(results)) == Counter(j.job_id for j in jobs)
    assert set(paid) == {f"job-tag-{i:02d}" for i in range(len(jobs))}
    assert twice == 0, log[-3000:]


def test_live_debrief_killed_with_paid_answers_pays_none_again(bootstrap: str,
                                                              tmp_path: Path) -> None:
    s: Settings = make_settings(bootstrap, llm=LLM)
    asyncio.run(ensure_topics(s))
    lines = REQUESTS_FILE.read_bytes().splitlines()
    requests = [(orjson.loads(r)["request_id"].encode(), r) for r in lines]
    asyncio.run(produce(bootstrap, s.topics.debrief_requests, requests))
    hold = HoldSecondCalls(lambda b: Reply.message(text="An evaluation in prose."),
                           attending)
    evaluations, log, paid, _ = kill_and_restart(
        lambda tag, env: WorkerProcess("debrief", s, tmp_path / f"debrief-{tag}.log", env),
        hold, len(requests), (bootstrap, s.topics.case_evaluations),
        lambda rs: len({r.key for r in rs}) >= len(requests), request_tag)
    twice = sum(n - 1 for n in paid.values())
    print(f"kill debrief: first calls paid twice {twice}")
    assert {e["request_id"] for e in values(evaluations)} == {k.decode() for k, _ in requests}
    assert set(paid) == {k.decode() for k, _ in requests}
    assert twice == 0, log[-3000:]


class HoldInFlight:
    """While ``holding``, every request waits at the fake, unanswered, until
    :meth:`next_round`; then it is answered with ``answer`` (a message: billed), into the
    socket of a worker killed meanwhile. Not holding: answered at once."""

    def __init__(self, answer: Callable[[dict[str, Any]], Reply]) -> None:
        self.answer = answer
        self.holding = True
        self.held = 0
        self._release = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            hold, release = self.holding, self._release
            self.held += hold
        if hold:
            release.wait(300)
        return self.answer(body)

    def next_round(self, holding: bool = True) -> int:
        """Answer the calls held so far; returns how many there were."""
        with self._lock:
            self._release.set()
            self._release = threading.Event()
            self.holding = holding
            held, self.held = self.held, 0
        return held


KILLS = 3
RESENT = "sent again, possibly paid twice"


def test_kills_with_calls_in_flight_repay_each_of_them_once_and_no_more(
        bootstrap: str, tmp_path: Path) -> None:
    """SIGKILL a judge worker KILLS times while ``llm.concurrency`` calls are in flight at
    the fake, then let a last worker finish: the calls paid twice are exactly the calls in
    flight at the kills (the bound: ``llm.concurrency`` per worker per kill), and the
    workers' own account (one line per call sent again) matches the fake's billing."""
    s = judge_settings(bootstrap, tmp_path, llm=LLM)
    asyncio.run(ensure_topics(s))
    jobs = [tagged_job(i) for i in range(8)]
    asyncio.run(produce(bootstrap, s.topics.judge_jobs, [record(j) for j in jobs]))
    concurrency = int(LLM["concurrency"])
    hold = HoldInFlight(lambda b: Reply.message(text=json.dumps(GOOD)))
    in_flight: list[int] = []
    logs: list[str] = []
    with FakeAnthropic(responder=hold) as fake:
        env = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.base_url}
        for k in range(KILLS):
            proc = WorkerProcess("judge", s, tmp_path / f"judge-kill-{k}.log", env)
            try:
                deadline = time.monotonic() + 90
                while hold.held < concurrency and time.monotonic() < deadline:
                    time.sleep(0.05)
                assert hold.held == concurrency, proc.log_text()[-3000:]
            finally:
                proc.kill()
            logs.append(proc.log_text())
            in_flight.append(hold.next_round(holding=k + 1 < KILLS))  # billed, never read
        last = WorkerProcess("judge", s, tmp_path / "judge-last.log", env)
        try:
            results = asyncio.run(collect(
                bootstrap, s.topics.judge_results, timeout=120, quiet=1.0,
                done=lambda rs: len({orjson.loads(r.value)["job_id"] for r in rs}) >= len(jobs)))
            logs.append(last.log_text())
        finally:
            last.kill()
        billed = Counter(job_tag(r.body) for r in fake.message_requests() if r.billed)
    twice = sum(n - 1 for n in billed.values())
    counted = sum(log.count(RESENT) for log in logs)
    print(f"kill judge x{KILLS} (concurrency {concurrency}): calls in flight at the kills "
          f"{in_flight}, calls paid twice {twice} of {sum(billed.values())}, counted by the "
          f"workers {counted}")
    assert Counter(r["job_id"] for r in values(results)) == Counter(j.job_id for j in jobs)
    assert set(billed) == {f"job-tag-{i:02d}" for i in range(len(jobs))}
    assert in_flight == [concurrency] * KILLS
    assert twice == sum(in_flight) <= KILLS * concurrency, billed
    assert counted == twice, "\n".join(log[-1500:] for log in logs)

"""A 429 on the judge's repair call is waited out like one on a first call.

Every first answer is usable but quotes a passage no note contains, so it gets the repair
round-trip; the fake answers each job's first repair requests with 429 (more of them than
the worker's own retries absorb), then a good answer. The job must not be published as
"flagged, the repair call failed (rate_limited); first answer kept" (for good: its result id
is deterministic, so a replay would skip it): the worker waits (breaker), asks again, reuses
the journaled first answer (paid once) and publishes ``ok`` with ``llm_calls`` 2 (answered
calls; the refused 429 attempts are not billed).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from streams.topics import ensure_topics
from tests.helpers import WorkerProcess, collect, produce, values
from tests.integration.test_judge_worker import GOOD, judge_settings, record
from tests.integration.test_llm_outage import job_tag, tagged_job
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

pytestmark = pytest.mark.integration

LLM = {"provider": "anthropic", "model": "claude-sonnet-5-5", "sdk_max_retries": 0,
       "deadline_seconds": 10.0, "backoff_base_seconds": 0.05, "requests_per_minute": 6000,
       "concurrency": 4, "max_attempts": 2, "breaker_backoff_seconds": 0.5,
       "breaker_backoff_max_seconds": 1.0}
INVENTED = {**GOOD, "reasoning": 'The note says "patient injects insulin glargine nightly". '
            "So agent A is right."}
REFUSED = 3  # 429s per job's repair: more than max_attempts, so the call itself gives up


class RateLimitedRepairs:
    def __init__(self) -> None:
        self.refused: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Reply:
        if len(body.get("messages", [])) == 1:
            return Reply.message(text=json.dumps(INVENTED))
        with self._lock:
            tag = job_tag(body)
            if self.refused[tag] < REFUSED:
                self.refused[tag] += 1
                return Reply.error(429, retry_after=0.2)
        return Reply.message(text=json.dumps(GOOD))


def test_a_rate_limited_repair_call_waits_and_publishes_ok(bootstrap: str,
                                                           tmp_path: Path) -> None:
    s = judge_settings(bootstrap, tmp_path, llm=LLM)
    asyncio.run(ensure_topics(s))
    jobs = [tagged_job(i) for i in range(3)]
    asyncio.run(produce(bootstrap, s.topics.judge_jobs, [record(j) for j in jobs]))
    responder = RateLimitedRepairs()
    with FakeAnthropic(responder=responder) as fake:
        env = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.base_url}
        with WorkerProcess("judge", s, tmp_path / "judge.log", env) as proc:
            out = asyncio.run(collect(bootstrap, s.topics.judge_results, until=len(jobs),
                                      timeout=90, quiet=1.0))
            dead = asyncio.run(collect(bootstrap, s.topics.dlq(s.topics.judge_jobs),
                                       timeout=2, quiet=0))
            log = proc.log_text()
        paid = Counter((job_tag(r.body), len(r.body["messages"]))
                       for r in fake.message_requests() if r.status == 200)
    results = values(out)
    assert Counter(r["job_id"] for r in results) == Counter(j.job_id for j in jobs), log[-3000:]
    assert dead == []
    for r in results:
        kinds = [(p["type"], p["action"]) for p in r["validation"]]
        assert r["status"] == "ok" and ("unverified_quote", "repaired") in kinds, r
        assert not any(t == "llm_error" for t, _ in kinds), r
        assert r["usage"]["llm_calls"] == 2, r["usage"]
    assert all(n == REFUSED for n in responder.refused.values()) and len(responder.refused) == 3
    # each job's first call and its repair were paid exactly once (the first one journaled)
    assert set(paid.values()) == {1} and len(paid) == 2 * len(jobs), paid

"""A debrief ``invalid_output`` dead letter is re-drivable to a fresh model call.

The worker dead-letters a request whose answers stay unusable after the repair round-trip,
and takes the request's LLM journal entry with it (a tombstone after the letter). So
``judgeflow replay dlq medkit.debrief-requests.v1.dlq`` asks the model again (counted at the
fake), instead of reusing the stored bad answers for ever (the probe: 11 -> 22 -> 33 dead
letters, 0 new calls, 11 journal keys left). Once the model answers properly, the re-driven
request is evaluated, and no debrief key is left in the journal.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import orjson
import pytest

from agents.debrief.sampledata import REQUESTS_FILE
from schemas.dlq import DeadLetterHeaders
from streams.topics import ensure_topics
from tests.helpers import collect, produce, values, worker
from tests.helpers import test_settings as make_settings
from tests.integration.test_cli import run_cli
from tests.unit.agents.debrief.support import attending, request_in
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

pytestmark = pytest.mark.integration

LLM = {"provider": "anthropic", "model": "claude-sonnet-5-5", "sdk_max_retries": 0,
       "deadline_seconds": 20.0, "backoff_base_seconds": 0.05, "requests_per_minute": 6000,
       "concurrency": 4}
BROKEN = "req-pf-001"


class UntilFixed:
    """Prose (no evaluation) for BROKEN until ``fixed`` is set; good evaluations otherwise."""

    def __init__(self) -> None:
        self.fixed = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Reply:
        if request_in(body).request_id == BROKEN and not self.fixed.is_set():
            return Reply.message(text="The trainee managed the febrile infant well.")
        return attending(body)


def journal_left(records: list[Any], worker_name: str) -> set[str]:
    """Journal keys of ``worker_name`` whose latest value is not a tombstone."""
    latest: dict[str, bytes | None] = {}
    for r in records:
        latest[r.key.decode()] = r.value
    return {k for k, v in latest.items() if k.startswith(f"{worker_name}|") and v is not None}


async def test_an_invalid_output_dead_letter_is_redriven_to_a_fresh_call(
        bootstrap: str, tmp_path: Path) -> None:
    s = make_settings(bootstrap, llm=LLM)
    await ensure_topics(s)
    requests = {orjson.loads(line)["request_id"]: line
                for line in REQUESTS_FILE.read_bytes().splitlines()}
    source, out = s.topics.debrief_requests, s.topics.case_evaluations
    dlq = s.topics.dlq(source)
    await produce(bootstrap, source, [(k.encode(), requests[k]) for k in (BROKEN, "req-cp-001")])
    responder = UntilFixed()
    with FakeAnthropic(responder=responder) as fake:
        def calls() -> int:
            return sum(1 for r in fake.message_requests()
                       if r.status == 200 and request_in(r.body).request_id == BROKEN)

        env = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.base_url}
        with worker("debrief", s, tmp_path, extra_env=env) as proc:
            letters = await collect(bootstrap, dlq, until=1, timeout=40, quiet=0.5)
            assert len(letters) == 1, proc.log_text()[-3000:]
            assert calls() == 2  # the request and its repair round-trip

            # re-driven while the model still fails: a fresh request and repair, a new letter
            again = run_cli(s, "replay", "dlq", dlq)
            assert "re-drove 1" in again.stdout, again.stdout + again.stderr
            letters = await collect(bootstrap, dlq, until=2, timeout=40, quiet=0.5)
            assert len(letters) == 2 and calls() == 4, proc.log_text()[-3000:]

            # the model answers properly now: the next re-drive is evaluated
            responder.fixed.set()
            fixed = run_cli(s, "replay", "dlq", dlq)
            assert "re-drove 1" in fixed.stdout, fixed.stdout + fixed.stderr
            evaluations = await collect(bootstrap, out, until=2, timeout=40, quiet=0.5)
            journal = await collect(bootstrap, s.topics.llm_journal, timeout=3, quiet=0)
            log = proc.log_text()
    assert {e["request_id"] for e in values(evaluations)} == {BROKEN, "req-cp-001"}, log[-3000:]
    assert calls() == 5
    assert {DeadLetterHeaders.from_kafka(r.headers).error_type for r in letters} == {
        "invalid_output"}
    assert journal_left(journal, "debrief") == set()

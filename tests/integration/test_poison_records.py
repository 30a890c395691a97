"""Poison records on every input topic (issue 8): a near-1 MiB record and an answer whose
rationale makes the cell state too big for the changelog. Each worker stays alive, puts the
record in its DLQ once (a truncated copy with the original size when it cannot fit), commits
past it once, and goes on with the records behind it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from agents.settings import Settings
from schemas.dlq import DeadLetterHeaders
from streams.limits import MAX_DLQ_RECORD_BYTES
from streams.topics import ensure_topics
from tests.helpers import collect, produce, values, wait_committed, worker
from tests.helpers import test_settings as make_settings
from tests.integration.sample import load_sample
from tests.integration.test_judge_worker import GOOD, judge_settings, record
from tests.unit.agents.debrief.support import attending
from tests.unit.agents.judge.fixtures import disagreement
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

pytestmark = pytest.mark.integration

#: Just under the producer's 1 MiB request limit: the record itself can be produced, but a
#: copy of it plus dead-letter headers cannot.
NEAR_1MIB = 1024 * 1024 - 200
DEBRIEF_LLM = {"provider": "anthropic", "model": "claude-sonnet-5-5", "sdk_max_retries": 0,
               "deadline_seconds": 20.0, "backoff_base_seconds": 0.05,
               "requests_per_minute": 6000, "concurrency": 4}


def _env(fake: FakeAnthropic) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test"}


def _padded(value: bytes, field: str, size: int) -> bytes:
    """``value`` with ``field`` padded so that the whole value is ``size`` bytes."""
    data = orjson.loads(value)
    data[field] = ""
    data[field] = "x" * (size - len(orjson.dumps(data)))
    out = orjson.dumps(data)
    assert len(out) == size
    return out


async def _check_dlq(s: Settings, topic: str, group: str, big: bytes, log: str) -> None:
    """Exactly one dead letter for the big record, typed ``oversized``, fitting the limit;
    the group committed the end of the input topic."""
    dlq = await collect(s.kafka.bootstrap_servers, s.topics.dlq(topic), until=1, timeout=20,
                        quiet=2.0)
    assert len(dlq) == 1, (len(dlq), log[-3000:])
    letter = dlq[0]
    head = DeadLetterHeaders.from_kafka(letter.headers)
    assert head.error_type == "oversized" and head.source_topic == topic
    headers = dict(letter.headers)
    if len(big) > MAX_DLQ_RECORD_BYTES:
        assert int(headers["original.size"]) == len(big)
        assert big.startswith(letter.value) and len(letter.value) < len(big)
    else:
        assert letter.value == big
    ends = await wait_committed(s.kafka.bootstrap_servers, group, topic)
    assert sum(ends.values()) == 2, (ends, log[-3000:])


async def test_detect_dead_letters_a_near_1mib_answer(bootstrap: str, tmp_path: Path) -> None:
    sample = load_sample()
    s = make_settings(bootstrap)
    await ensure_topics(s)
    key, value = sample.answers[0]
    big = _padded(value, "rationale", NEAR_1MIB)
    good = sample.answers[1]
    with worker("detect", s, tmp_path) as w:
        await produce(bootstrap, s.topics.agent_answers, [(key, big), good])
        out = await collect(bootstrap, s.topics.cell_outcomes, until=1, timeout=60, quiet=0.5)
        await _check_dlq(s, s.topics.agent_answers, s.groups.detect, big, w.log_text())
        assert out, w.log_text()[-3000:]
        assert w.alive, w.log_text()[-3000:]


async def test_detect_survives_an_answer_too_big_for_the_cell_state(
        bootstrap: str, tmp_path: Path) -> None:
    """A valid answer with a 700 KB rationale: once its cell is decided, the state (answer
    plus the job that quotes it) would exceed the changelog's record limit."""
    sample = load_sample()
    s = make_settings(bootstrap)
    await ensure_topics(s)
    key, value = sample.answers[0]
    big = _padded(value, "rationale", 700_000)
    with worker("detect", s, tmp_path) as w:
        await produce(bootstrap, s.topics.agent_answers, [(key, big), sample.answers[1]])
        await _check_dlq(s, s.topics.agent_answers, s.groups.detect, big, w.log_text())
        out = await collect(bootstrap, s.topics.cell_outcomes, until=1, timeout=60, quiet=0.5)
        jobs = await collect(bootstrap, s.topics.judge_jobs, timeout=3, quiet=0.5)
        assert out, w.log_text()[-3000:]
        assert w.alive, w.log_text()[-3000:]
        assert "exit" not in w.log_text().lower() or w.alive
    assert all(len(r.value) < 200_000 for r in jobs)


async def test_judge_dead_letters_a_near_1mib_job(bootstrap: str, tmp_path: Path) -> None:
    s = judge_settings(bootstrap, tmp_path)
    await ensure_topics(s)
    k, v = record(disagreement(job_id="job-big"))
    big = _padded(v, "pad", NEAR_1MIB)
    good = record(disagreement(job_id="job-after"))
    with FakeAnthropic(responder=lambda body: Reply.message(text=json.dumps(GOOD))) as fake, \
            worker("judge", s, tmp_path, extra_env=_env(fake)) as w:
        await produce(bootstrap, s.topics.judge_jobs, [(k, big), good])
        out = values(await collect(bootstrap, s.topics.judge_results, until=1, timeout=60,
                                   quiet=0.5))
        await _check_dlq(s, s.topics.judge_jobs, s.groups.judge, big, w.log_text())
        assert [r["job_id"] for r in out] == ["job-after"], w.log_text()[-3000:]
        assert w.alive, w.log_text()[-3000:]


async def test_debrief_dead_letters_a_near_1mib_request(bootstrap: str, tmp_path: Path) -> None:
    from agents.debrief.sampledata import REQUESTS_FILE

    s = make_settings(bootstrap, llm=DEBRIEF_LLM)
    await ensure_topics(s)
    lines = REQUESTS_FILE.read_bytes().splitlines()
    first: dict[str, Any] = orjson.loads(lines[0])
    big = _padded(lines[0], "pad", NEAR_1MIB)
    second = orjson.loads(lines[1])
    with FakeAnthropic(responder=attending) as fake, \
            worker("debrief", s, tmp_path, extra_env=_env(fake)) as w:
        await produce(bootstrap, s.topics.debrief_requests,
                      [(first["request_id"].encode(), big),
                       (second["request_id"].encode(), lines[1])])
        out = values(await collect(bootstrap, s.topics.case_evaluations, until=1, timeout=60,
                                   quiet=0.5))
        await _check_dlq(s, s.topics.debrief_requests, s.groups.debrief, big, w.log_text())
        assert [r["request_id"] for r in out] == [second["request_id"]], w.log_text()[-3000:]
        assert w.alive, w.log_text()[-3000:]

"""One oversized record per worker input, the shape test_poison_records (near 1 MiB, both
brokers) and test_oversized_apache (5 MiB on a raised broker maximum) share: the big record
and one good record behind it go in; the worker puts the big one in its ``.dlq`` once as
``oversized`` (whole when it fits the dead-letter limit, else truncated as documented in
streams/limits.py), commits past both, processes the good one and stays alive."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import orjson

from agents.debrief.sampledata import REQUESTS_FILE
from agents.settings import Settings
from schemas.dlq import DeadLetterHeaders
from streams.limits import DLQ_TRUNCATED_VALUE_BYTES, MAX_DLQ_RECORD_BYTES
from streams.topics import ensure_topics
from tests.helpers import collect, values, wait_committed, worker
from tests.helpers import test_settings as make_settings
from tests.integration.sample import load_sample
from tests.integration.test_judge_worker import GOOD, judge_settings, record
from tests.unit.agents.debrief.support import attending
from tests.unit.agents.judge.fixtures import disagreement
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

#: How the case puts its two records on the input topic: ``send(bootstrap, topic, records)``.
Send = Callable[[str, str, list[tuple[bytes, bytes]]], Awaitable[None]]
DEBRIEF_LLM = {"provider": "anthropic", "model": "claude-sonnet-5-5", "sdk_max_retries": 0,
               "deadline_seconds": 20.0, "backoff_base_seconds": 0.05,
               "requests_per_minute": 6000, "concurrency": 4}


def fake_env(fake: FakeAnthropic) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test"}


def padded(value: bytes, field: str, size: int) -> bytes:
    """``value`` with ``field`` padded so that the whole value is ``size`` bytes."""
    data = orjson.loads(value)
    data[field] = ""
    data[field] = "x" * (size - len(orjson.dumps(data)))
    out = orjson.dumps(data)
    assert len(out) == size
    return out


async def check_dlq(s: Settings, topic: str, group: str, big: bytes, log: str) -> None:
    """Exactly one dead letter for the big record, typed ``oversized``: the value whole, or
    (too big for the dead-letter limit) its first DLQ_TRUNCATED_VALUE_BYTES with
    ``original.size`` and ``truncated.reason``; the group committed both input records."""
    dlq = await collect(s.kafka.bootstrap_servers, s.topics.dlq(topic), until=1, timeout=60,
                        quiet=2.0)
    assert len(dlq) == 1, (len(dlq), log[-3000:])
    letter = dlq[0]
    head = DeadLetterHeaders.from_kafka(letter.headers)
    assert head.error_type == "oversized" and head.source_topic == topic
    headers = dict(letter.headers)
    if len(big) > MAX_DLQ_RECORD_BYTES:
        assert int(headers["original.size"]) == len(big)
        assert b"exceeds the dead-letter limit" in headers["truncated.reason"]
        assert letter.value == big[:DLQ_TRUNCATED_VALUE_BYTES]
    else:
        assert letter.value == big and "original.size" not in headers
    ends = await wait_committed(s.kafka.bootstrap_servers, group, topic)
    assert sum(ends.values()) == 2, (ends, log[-3000:])


async def detect_case(bootstrap: str, tmp_path: Path, size: int, send: Send) -> None:
    sample = load_sample()
    s = make_settings(bootstrap)
    await ensure_topics(s)
    key, value = sample.answers[0]
    big = padded(value, "rationale", size)
    with worker("detect", s, tmp_path) as w:
        await send(bootstrap, s.topics.agent_answers, [(key, big), sample.answers[1]])
        await check_dlq(s, s.topics.agent_answers, s.groups.detect, big, w.log_text())
        out = await collect(bootstrap, s.topics.cell_outcomes, until=1, timeout=60, quiet=0.5)
        assert out, w.log_text()[-3000:]
        assert w.alive, w.log_text()[-3000:]


async def judge_case(bootstrap: str, tmp_path: Path, size: int, send: Send) -> None:
    s = judge_settings(bootstrap, tmp_path)
    await ensure_topics(s)
    k, v = record(disagreement(job_id="job-big"))
    big = padded(v, "pad", size)
    with FakeAnthropic(responder=lambda body: Reply.message(text=json.dumps(GOOD))) as fake, \
            worker("judge", s, tmp_path, extra_env=fake_env(fake)) as w:
        await send(bootstrap, s.topics.judge_jobs,
                   [(k, big), record(disagreement(job_id="job-after"))])
        await check_dlq(s, s.topics.judge_jobs, s.groups.judge, big, w.log_text())
        out = values(await collect(bootstrap, s.topics.judge_results, until=1, timeout=60,
                                   quiet=0.5))
        assert [r["job_id"] for r in out] == ["job-after"], w.log_text()[-3000:]
        assert w.alive, w.log_text()[-3000:]


async def debrief_case(bootstrap: str, tmp_path: Path, size: int, send: Send) -> None:
    s = make_settings(bootstrap, llm=DEBRIEF_LLM)
    await ensure_topics(s)
    lines = REQUESTS_FILE.read_bytes().splitlines()
    first, second = orjson.loads(lines[0]), orjson.loads(lines[1])
    big = padded(lines[0], "pad", size)
    with FakeAnthropic(responder=attending) as fake, \
            worker("debrief", s, tmp_path, extra_env=fake_env(fake)) as w:
        await send(bootstrap, s.topics.debrief_requests,
                   [(first["request_id"].encode(), big),
                    (second["request_id"].encode(), lines[1])])
        await check_dlq(s, s.topics.debrief_requests, s.groups.debrief, big, w.log_text())
        out = values(await collect(bootstrap, s.topics.case_evaluations, until=1, timeout=60,
                                   quiet=0.5))
        assert [r["request_id"] for r in out] == [second["request_id"]], w.log_text()[-3000:]
        assert w.alive, w.log_text()[-3000:]


#: Every worker with an input topic that takes a record this big.
CASES = {"detect": detect_case, "judge": judge_case, "debrief": debrief_case}

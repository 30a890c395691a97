"""Records up to a raised broker maximum (Apache Kafka with ``message.max.bytes`` 5 MiB, as
a hospital cluster carrying long transcripts might run) reach every worker and go to its
``.dlq`` as ``oversized``, truncated as documented (streams/limits.py: the first
``DLQ_TRUNCATED_VALUE_BYTES`` of the value, ``original.size`` and ``truncated.reason``
headers); the record behind each is processed and the workers stay alive.

The embedded broker's limit is 1 MiB, so this runs on Apache Kafka only (test_poison_records
covers records near 1 MiB on both brokers)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from agents.debrief.sampledata import REQUESTS_FILE
from agents.settings import Settings
from schemas.dlq import DeadLetterHeaders
from streams import kafka_clients
from streams.limits import DLQ_TRUNCATED_VALUE_BYTES
from streams.topics import ensure_topics
from tests.helpers import collect, values, wait_committed, worker
from tests.helpers import test_settings as make_settings
from tests.integration.sample import load_sample
from tests.integration.test_judge_worker import GOOD, judge_settings, record
from tests.integration.test_poison_records import DEBRIEF_LLM, _env, _padded
from tests.kafka import apache_kafka_or_skip, use_broker
from tests.unit.agents.debrief.support import attending
from tests.unit.agents.judge.fixtures import disagreement
from tools.fakes.fake_anthropic import FakeAnthropic, Reply
from tools.kafka import ApacheKafka

pytestmark = pytest.mark.integration

BROKER_MAX = 5 * 1024 * 1024
#: The largest value the broker takes in a batch of one record (batch + record overhead).
NEAR_MAX = BROKER_MAX - 1024


@pytest.fixture(scope="module")
def kafka5m(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApacheKafka]:
    with apache_kafka_or_skip(message_max_bytes=BROKER_MAX,
                              work_dir=tmp_path_factory.mktemp("kafka5m")) as k:
        yield k


@pytest.fixture()
def bootstrap5m(kafka5m: ApacheKafka) -> str:
    use_broker("apache", kafka5m.bootstrap)
    return kafka5m.bootstrap


async def produce_big(bootstrap: str, topic: str, records: list[tuple[bytes, bytes]]) -> None:
    """As a producer configured for the raised limit would (max.request.size above it)."""
    producer = kafka_clients.producer(bootstrap, acks="all", enable_idempotence=True,
                                      max_request_size=BROKER_MAX + 64 * 1024)
    await producer.start()
    try:
        for key, value in records:  # one record per batch: the big one alone fits the max
            await producer.send_and_wait(topic, value=value, key=key)
    finally:
        await producer.stop()


async def check_truncated(s: Settings, topic: str, group: str, big: bytes, log: str) -> None:
    dlq = await collect(s.kafka.bootstrap_servers, s.topics.dlq(topic), until=1, timeout=60,
                        quiet=2.0)
    assert len(dlq) == 1, (len(dlq), log[-3000:])
    letter = dlq[0]
    head = DeadLetterHeaders.from_kafka(letter.headers)
    assert head.error_type == "oversized" and head.source_topic == topic
    headers = dict(letter.headers)
    assert int(headers["original.size"]) == len(big)
    assert b"exceeds the dead-letter limit" in headers["truncated.reason"]
    assert letter.value == big[:DLQ_TRUNCATED_VALUE_BYTES]
    ends = await wait_committed(s.kafka.bootstrap_servers, group, topic)
    assert sum(ends.values()) == 2, (ends, log[-3000:])


async def test_detect_dead_letters_a_5mib_answer(bootstrap5m: str, tmp_path: Path) -> None:
    sample = load_sample()
    s = make_settings(bootstrap5m)
    await ensure_topics(s)
    key, value = sample.answers[0]
    big = _padded(value, "rationale", NEAR_MAX)
    with worker("detect", s, tmp_path) as w:
        await produce_big(bootstrap5m, s.topics.agent_answers, [(key, big), sample.answers[1]])
        await check_truncated(s, s.topics.agent_answers, s.groups.detect, big, w.log_text())
        out = await collect(bootstrap5m, s.topics.cell_outcomes, until=1, timeout=60, quiet=0.5)
        assert out, w.log_text()[-3000:]
        assert w.alive, w.log_text()[-3000:]


async def test_judge_dead_letters_a_5mib_job(bootstrap5m: str, tmp_path: Path) -> None:
    s = judge_settings(bootstrap5m, tmp_path)
    await ensure_topics(s)
    k, v = record(disagreement(job_id="job-5mib"))
    big = _padded(v, "pad", NEAR_MAX)
    with FakeAnthropic(responder=lambda body: Reply.message(text=json.dumps(GOOD))) as fake, \
            worker("judge", s, tmp_path, extra_env=_env(fake)) as w:
        await produce_big(bootstrap5m, s.topics.judge_jobs,
                          [(k, big), record(disagreement(job_id="job-after-5mib"))])
        await check_truncated(s, s.topics.judge_jobs, s.groups.judge, big, w.log_text())
        out = values(await collect(bootstrap5m, s.topics.judge_results, until=1, timeout=60,
                                   quiet=0.5))
        assert [r["job_id"] for r in out] == ["job-after-5mib"], w.log_text()[-3000:]
        assert w.alive, w.log_text()[-3000:]


async def test_debrief_dead_letters_a_5mib_request(bootstrap5m: str, tmp_path: Path) -> None:
    s = make_settings(bootstrap5m, llm=DEBRIEF_LLM)
    await ensure_topics(s)
    lines = REQUESTS_FILE.read_bytes().splitlines()
    first, second = orjson.loads(lines[0]), orjson.loads(lines[1])
    big = _padded(lines[0], "pad", NEAR_MAX)
    with FakeAnthropic(responder=attending) as fake, \
            worker("debrief", s, tmp_path, extra_env=_env(fake)) as w:
        await produce_big(bootstrap5m, s.topics.debrief_requests,
                          [(first["request_id"].encode(), big),
                           (second["request_id"].encode(), lines[1])])
        await check_truncated(s, s.topics.debrief_requests, s.groups.debrief, big, w.log_text())
        out = values(await collect(bootstrap5m, s.topics.case_evaluations, until=1, timeout=60,
                                   quiet=0.5))
        assert [r["request_id"] for r in out] == [second["request_id"]], w.log_text()[-3000:]
        assert w.alive, w.log_text()[-3000:]

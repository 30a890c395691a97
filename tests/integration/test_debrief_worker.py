"""`judgeflow worker debrief` as a subprocess against a real broker and the fake
Anthropic server: evaluations published, bad records dead-lettered with typed headers, and
exactly one evaluation per request id across a SIGKILL and restart."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from agents.debrief import summarize
from agents.debrief.sampledata import REQUESTS_FILE
from agents.settings import Settings
from schemas.dlq import DeadLetterHeaders
from streams.topics import ensure_topics
from tests.helpers import collect, produce, values, worker
from tests.helpers import test_settings as make_settings
from tests.unit.agents.debrief.support import attending, request_in
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

pytestmark = pytest.mark.integration

LLM = {"provider": "anthropic", "model": "claude-sonnet-5-5", "sdk_max_retries": 0,
       "deadline_seconds": 20.0, "backoff_base_seconds": 0.05, "requests_per_minute": 6000,
       "concurrency": 4}


def _attending_except_pf001(body: dict[str, Any]) -> Reply:
    """Good evaluations, except that req-pf-001 only ever gets prose (no tool call)."""
    if request_in(body).request_id == "req-pf-001":
        return Reply.message(text="The trainee managed the febrile infant well.")
    return attending(body)


@pytest.fixture()
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(responder=_attending_except_pf001) as f:
        yield f


def _env(fake: FakeAnthropic) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": fake.base_url, "ANTHROPIC_API_KEY": "test"}


def _requests() -> list[tuple[bytes, bytes]]:
    out = []
    for line in REQUESTS_FILE.read_bytes().splitlines():
        out.append((orjson.loads(line)["request_id"].encode(), line))
    return out


async def _prepare(settings: Settings) -> None:
    await ensure_topics(settings)


async def test_evaluations_are_published_and_bad_records_dead_lettered(
        bootstrap: str, tmp_path: Path, fake: FakeAnthropic) -> None:
    settings = make_settings(bootstrap, llm=LLM)
    await _prepare(settings)
    good = [r for r in _requests() if r[0] in (b"req-cp-001", b"req-sep-002", b"req-ank-001")]
    never_tool = next(r for r in _requests() if r[0] == b"req-pf-001")
    schema_error = orjson.dumps({"request_id": "req-broken", "case_id": "x"})
    await produce(bootstrap, settings.topics.debrief_requests,
                  [(b"req-junk", b"{not json"), good[0], (b"req-broken", schema_error),
                   never_tool, *good[1:]])
    with worker("debrief", settings, tmp_path, extra_env=_env(fake)) as proc:
        out = await collect(bootstrap, settings.topics.case_evaluations, until=3, timeout=40)
        dlq = await collect(bootstrap, settings.topics.dlq(settings.topics.debrief_requests),
                            until=3, timeout=20, quiet=0.5)
        assert proc.proc.poll() is None, proc.log_text()
    evaluations = {ev["request_id"]: ev for ev in values(out)}
    assert sorted(evaluations) == ["req-ank-001", "req-cp-001", "req-sep-002"]
    assert [r.key for r in out if r.key] == [r.key for r in out]  # keyed by request_id
    sepsis = evaluations["req-sep-002"]
    assert sepsis["safety_breach"]["kind"] == "contraindicated_drug"
    assert sepsis["narrative"].startswith("Safety breach:")
    assert evaluations["req-ank-001"]["rubric_source"] == "auto"
    assert all(ev["provider"] == "anthropic" for ev in evaluations.values())
    assert "safety breach: yes" in summarize(sepsis)
    letters = {r.key: DeadLetterHeaders.from_kafka(r.headers) for r in dlq}
    assert {k: h.error_type for k, h in letters.items()} == {
        b"req-junk": "invalid_json", b"req-broken": "schema_error",
        b"req-pf-001": "invalid_output"}
    assert "after one repair round-trip" in letters[b"req-pf-001"].error_message
    assert {r.value for r in dlq} == {b"{not json", schema_error, never_tool[1]}  # untouched
    asked = [request_in(r.body).request_id for r in fake.message_requests()]
    assert asked.count("req-pf-001") == 2  # the request and one repair round-trip
    assert all(h.source_topic == settings.topics.debrief_requests for h in letters.values())


async def test_sigkill_and_restart_leave_exactly_one_evaluation_per_request(
        bootstrap: str, tmp_path: Path) -> None:
    # No offset is committed before the kill, so every request is redelivered to the second
    # worker: it must skip those whose evaluation is already on the output topic.
    settings = make_settings(bootstrap, llm=LLM, kafka={"commit_interval_seconds": 120.0})
    await _prepare(settings)
    requests = _requests()
    await produce(bootstrap, settings.topics.debrief_requests, requests)
    topic = settings.topics.case_evaluations
    with FakeAnthropic(responder=attending, latency=0.4) as fake:
        with worker("debrief", settings, tmp_path, tag="-1", extra_env=_env(fake)) as first:
            before = await collect(bootstrap, topic, until=3, timeout=40, quiet=0)
            first.kill()
        published = len(await collect(bootstrap, topic, timeout=3, quiet=0))
        assert 3 <= published < len(requests)
        with worker("debrief", settings, tmp_path, tag="-2", extra_env=_env(fake)) as second:
            after = await collect(bootstrap, topic, until=len(requests), timeout=60, quiet=3)
            log = second.log_text()
    ids = Counter(ev["request_id"] for ev in values(after))
    assert set(ids) == {k.decode() for k, _ in requests}, log[-3000:]
    assert max(ids.values()) == 1, ids
    assert len({ev["evaluation_id"] for ev in values(after)}) == len(requests)
    assert log.count("already published; skipped") == published
    assert before  # the first worker really published before it died


async def test_offline_provider_grades_every_bundled_request_without_network(
        bootstrap: str, tmp_path: Path) -> None:
    settings = make_settings(bootstrap, llm={"provider": "offline"})
    await _prepare(settings)
    requests = _requests()
    await produce(bootstrap, settings.topics.debrief_requests, requests)
    with worker("debrief", settings, tmp_path):
        out = values(await collect(bootstrap, settings.topics.case_evaluations,
                                   until=len(requests), timeout=40, quiet=1))
    assert sorted(ev["request_id"] for ev in out) == sorted(k.decode() for k, _ in requests)
    assert {ev["provider"] for ev in out} == {"offline"}
    by_id = {ev["request_id"]: ev for ev in out}
    assert by_id["req-cp-003"]["dropped_criteria"][0]["guideline_ref"] == "ESC-STEMI-STATIN"
    assert by_id["req-ank-002"]["rubric_source"] == "auto"

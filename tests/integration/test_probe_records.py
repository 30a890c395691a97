"""The fault probe's hostile records (issue 25) through the real workers, as a table
(tests/unit/streams/probe_cases.py: input record -> dead-letter type), on both brokers (the
``apache`` variant is Apache Kafka): every bad record lands in its topic's ``.dlq`` with its
type, nothing is paid for it (the fake API sees only the good record's calls), no worker
stops or loops, and the good record after the bad ones is processed.

The issue's reproduction is part of it: an adjudication whose ``adjudicated_at`` has no
offset, after an aware one of the same (gate) cell, took down calibrate (exit 1, then a crash
loop) and the judge's gate reader (the judge then failed on every start), and the dead
letters of the same batch were logged but never written."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml

from agents.settings import Settings
from schemas.dlq import DeadLetterHeaders
from streams.topics import ensure_topics
from tests.helpers import collect, produce, values, worker
from tests.helpers import test_settings as make_settings
from tests.integration.oversized import DEBRIEF_LLM, fake_env
from tests.integration.test_calibrate_worker import _keyed, latest
from tests.integration.test_judge_worker import GOOD, judge_settings
from tests.unit.agents.calibrate import scenario as sc
from tests.unit.agents.debrief.support import attending
from tests.unit.agents.judge.fixtures import TASK
from tests.unit.streams import probe_cases as probe
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

pytestmark = pytest.mark.integration

Case = tuple[str, bytes, "str | None"]


def bad(cases: list[Case]) -> Counter[str]:
    return Counter(t for _, _, t in cases if t is not None)


async def dead_letters(s: Settings, topic: str, n: int, log: str) -> Counter[str]:
    got = await collect(s.kafka.bootstrap_servers, s.topics.dlq(topic), until=n, timeout=90,
                        quiet=1.0)
    assert len(got) == n, (len(got), log[-3000:])
    heads = [DeadLetterHeaders.from_kafka(r.headers) for r in got]
    assert all(h.source_topic == topic for h in heads)
    return Counter(h.error_type for h in heads)


def gated_skill(root: Path) -> None:
    """The judge fixture skill with ``on_sglt2i`` gated on ``t2dm_dx``: the judge follows
    the adjudications topic (its gate reader is what the issue's record killed)."""
    path = root / "skill" / "references" / "criteria" / "on_sglt2i.md"
    _, front, body = path.read_text().split("---\n", 2)
    head = {**yaml.safe_load(front), "gate": {"field_id": "t2dm_dx", "value": True}}
    path.write_text(f"---\n{yaml.safe_dump(head, sort_keys=False)}---\n{body}")


async def test_judge_dead_letters_the_probe_jobs_before_paying(bootstrap: str,
                                                               tmp_path: Path) -> None:
    s = judge_settings(bootstrap, tmp_path, tasks=(TASK,))
    gated_skill(tmp_path / "data")
    await ensure_topics(s)
    t = s.topics
    adjudications = probe.adjudications()  # the issue's record among them, on a gate cell
    await produce(bootstrap, t.adjudications,
                  [(b"k", probe.dumps(probe.ADJUDICATION))]
                  + [(b"k", raw) for _, raw, _ in adjudications])
    cases = probe.jobs()
    await produce(bootstrap, t.judge_jobs, [(b"k", raw) for _, raw, _ in cases])
    with FakeAnthropic(responder=lambda body: Reply.message(text=json.dumps(GOOD))) as fake, \
            worker("judge", s, tmp_path, extra_env=fake_env(fake)) as w:
        types = await dead_letters(s, t.judge_jobs, sum(bad(cases).values()), w.log_text())
        results = values(await collect(bootstrap, t.judge_results, until=1, timeout=60,
                                       quiet=1.0))
        assert w.alive, w.log_text()[-3000:]
        log = w.log_text()
    assert types == bad(cases)
    assert [r["job_id"] for r in results] == ["job-probe-good"], log[-3000:]
    # paid for the good job only (usage counts the calls the result needed)
    assert len(fake.message_requests()) == results[0]["usage"]["llm_calls"] >= 1
    assert "job forged" not in log and "\x1b" not in log and "Traceback" not in log
    assert "skipped" in log and "schema_error" in log  # the gate reader said so, went on
    assert "JUDGEFLOW_TASKS is empty" not in log  # set: no warning


async def test_debrief_dead_letters_the_probe_requests_before_paying(bootstrap: str,
                                                                     tmp_path: Path) -> None:
    cases = probe.requests()
    catalogue = tuple(sorted({orjson.loads(raw).get("case_id", "") for _, raw, t in cases
                              if t is None}))
    s = make_settings(bootstrap, llm=DEBRIEF_LLM, debrief_cases=catalogue)
    await ensure_topics(s)
    t = s.topics
    await produce(bootstrap, t.debrief_requests, [(b"k", raw) for _, raw, _ in cases])
    with FakeAnthropic(responder=attending) as fake, \
            worker("debrief", s, tmp_path, extra_env=fake_env(fake)) as w:
        types = await dead_letters(s, t.debrief_requests, sum(bad(cases).values()),
                                   w.log_text())
        out = values(await collect(bootstrap, t.case_evaluations, until=1, timeout=60,
                                   quiet=1.0))
        assert w.alive, w.log_text()[-3000:]
    assert types == bad(cases)
    good = orjson.loads(next(raw for _, raw, t in cases if t is None))
    assert [e["request_id"] for e in out] == [good["request_id"]]
    assert len(fake.message_requests()) == out[0]["usage"]["llm_calls"] >= 1


async def test_calibrate_keeps_going_after_the_issue_adjudication(bootstrap: str,
                                                                  tmp_path: Path) -> None:
    """The scenario's results and outcomes, its adjudications, the probe's faults on one of
    them (the naive time after the aware one), then a later good adjudication: every fault
    dead-lettered and written, the good one counted, the worker alive and never failing."""
    s = make_settings(bootstrap, skill_dir=tmp_path / "no-skill")
    await ensure_topics(s)
    t = s.topics
    base: dict[str, Any] = sc.adjudication("c2", "yes", "agent_b_error",
                                           "agent_a").model_dump(mode="json")
    faults = [c for c in probe.adjudications(base) if c[2] is not None]
    good = {**base, "final_answer": "no", "adjudicated_at": "2026-01-01T01:00:00Z"}
    await produce(bootstrap, t.judge_results, _keyed(sc.results()))
    await produce(bootstrap, t.cell_outcomes, _keyed(sc.outcomes()))
    await produce(bootstrap, t.adjudications, _keyed(sc.adjudications()))
    with worker("calibrate", s, tmp_path) as w:
        first = await collect(bootstrap, t.calibration, until=2, timeout=60, quiet=1.0)
        assert latest(first)["v1"]["answer_accuracy"]["hits"] == 2, w.log_text()[-3000:]
        await produce(bootstrap, t.adjudications,
                      [(b"T|c2|f", raw) for _, raw, _ in faults]
                      + [(b"T|c2|f", orjson.dumps(good))])
        types = await dead_letters(s, t.adjudications, len(faults), w.log_text())
        after = await collect(bootstrap, t.calibration, until=4, timeout=60, quiet=1.0)
        assert w.alive, w.log_text()[-3000:]
        log = w.log_text()
    assert types == bad(faults)
    # c2's final answer is now "no": v1 (suggested "no") 3 of 3
    assert latest(after)["v1"]["answer_accuracy"]["hits"] == 3, log[-3000:]
    assert "Traceback" not in log and "failed on" not in log


async def test_detect_dead_letters_the_probe_answers(bootstrap: str, tmp_path: Path) -> None:
    """Detect decodes its own input: the same faults give the same dead-letter types (a
    repeated ``patient_id`` was read as the second patient; NaN was ``invalid_json``; event
    and run ids carried a newline and ESC), and the good answer after them is decided."""
    cases = probe.answers()
    s = make_settings(bootstrap)
    await ensure_topics(s)
    t = s.topics

    def key(raw: bytes) -> bytes:
        d = json.loads(raw)  # reads NaN too
        return f"{d['task_id']}|{d['patient_id']}|{d['field_id']}".encode()

    await produce(bootstrap, t.agent_answers, [(key(raw), raw) for _, raw, _ in cases])
    with worker("detect", s, tmp_path) as w:
        types = await dead_letters(s, t.agent_answers, sum(bad(cases).values()), w.log_text())
        out = values(await collect(bootstrap, t.cell_outcomes, until=1, timeout=60, quiet=1.0))
        assert w.alive, w.log_text()[-3000:]
        log = w.log_text()
    assert types == bad(cases)
    good = orjson.loads(next(raw for _, raw, t in cases if t is None))
    assert [(o["patient_id"], o["field_id"]) for o in out] == [
        (good["patient_id"], good["field_id"])], log[-3000:]
    assert "\x1b" not in log and "Traceback" not in log

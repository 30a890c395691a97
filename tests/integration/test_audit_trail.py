"""The access audit trail on a real broker: two reviewers open a patient's cell on the page
(started as a process, as operators run it), one decides; ``judgeflow audit --patient`` and
``--reviewer`` answer who saw what from the topic; the trail holds ids and spans, never the
note's text; and a page whose audit write the broker does not acknowledge serves no text."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from aiokafka.admin import NewTopic

from dashboard.identity import KEY_FILE, add_reviewer, pseudonym
from streams import kafka_clients
from streams.topics import ensure_topics
from tests.helpers import collect, produce, settings_env, test_settings
from tests.kafka import TestBroker
from tools.broker import EmbeddedBroker
from tools.dashboard_launch import start_dashboard

pytestmark = pytest.mark.integration

NOTE = ("PHI-MARKER-5521 Assessment: HbA1c 5.9%. Family history: mother with type 2 "
        "diabetes. Seen by Dr Quill at 12 Elm Road.")
CITED = "mother with type 2 diabetes"


def result(rid: str, patient: str) -> dict[str, Any]:
    start = NOTE.index(CITED)
    return {"result_id": rid, "job_id": f"job-{rid}", "task_id": "t2d", "patient_id": patient,
            "field_id": "diabetes_type", "kind": "disagreement", "status": "flagged",
            "analysis": {"suggested_answer": "type_2", "reasoning": "Dr Quill notes type 2.",
                         "evidence_pointers": [{"note_id": "n-1", "what_to_look_for": "type",
                                                "offsets": [start, start + len(CITED)]}]},
            "validation": [], "prompt_version": "judge-v1", "provider": "offline",
            "model": "offline", "judged_at": "2026-12-01T08:00:00Z",
            "agents": ["default", "skeptical"]}


def job(rid: str) -> dict[str, Any]:
    return {"job_id": f"job-{rid}", "normalized": ["type_2", "no_info"], "answers": [
        {"agent_id": "default", "answer": "type_2", "rationale": "12 Elm Road family history",
         "evidence": [{"note_id": "n-2", "quote": "Dr Quill"}]}]}


def cli(settings: Any, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGEFLOW_")}
    env.update(settings_env(settings))
    return subprocess.run([sys.executable, "-m", "cli.main", *args], capture_output=True,
                          text=True, env=env, timeout=120, check=False)


async def open_cell(url: str, token: str, rid: str, timeout: float = 30.0,
                    sign_in: bool = True) -> tuple[int, str]:
    """GET the cell as a signed-in reviewer (``sign_in`` False: with the token as a bearer);
    waits while it is not yet in the window."""
    deadline = time.monotonic() + timeout
    bearer = {} if sign_in else {"Authorization": f"Bearer {token}"}
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
        if sign_in:
            async with http.get(url + "auth", params={"token": token}, allow_redirects=False):
                pass
        while True:
            async with http.get(url + f"api/cell/{rid}", headers=bearer) as resp:
                if resp.status != 404 or time.monotonic() > deadline:
                    return resp.status, await resp.text()
            await asyncio.sleep(0.1)


async def test_who_viewed_a_patient_is_answered_from_the_trail(bootstrap: str,
                                                               tmp_path: Path) -> None:
    (tmp_path / "charts" / "P033").mkdir(parents=True)
    (tmp_path / "charts" / "P033" / "n-1.txt").write_text(NOTE, encoding="utf-8")
    reviewers = tmp_path / "reviewers.txt"
    tokens = {name: add_reviewer(reviewers, name) for name in ("alice", "bob")}
    settings = test_settings(bootstrap, charts_dir=tmp_path / "charts")
    await ensure_topics(settings)
    t = settings.topics
    await produce(bootstrap, t.judge_jobs, [(b"k", orjson.dumps(job("r-top")))])
    await produce(bootstrap, t.judge_results, [(b"t2d|P033|diabetes_type",
                                                orjson.dumps(result("r-top", "P033")))])
    proc, url = start_dashboard(settings, tmp_path / "dashboard.log",
                                ["--port", "0", "--reviewers", str(reviewers)])
    try:
        for name in ("alice", "bob"):
            status, body = await open_cell(url, tokens[name], "r-top")
            assert status == 200 and "PHI-MARKER-5521" in body, (status, body[:300])
    finally:
        proc.kill()
    trail = await collect(bootstrap, t.audit, until=4, timeout=30, quiet=0.5)
    raw = b"\n".join(r.value for r in trail)
    for secret in (b"PHI-MARKER", b"Quill", b"Elm Road", b"HbA1c", b"mother", b"alice",
                   *(tok.encode() for tok in tokens.values())):
        assert secret not in raw, secret  # ids and spans only
    key = (Path(settings.state_dir) / KEY_FILE).read_text().strip().encode()
    alice, bob = pseudonym(key, "alice"), pseudonym(key, "bob")
    by_patient = cli(settings, "audit", "--patient", "P033")
    assert by_patient.returncode == 0, by_patient.stderr
    print(by_patient.stdout)  # the figure the issue asks for
    start = NOTE.index(CITED)
    assert f"notes n-1[{start}:{start + len(CITED)}],n-2" in by_patient.stdout
    assert (f"patient P033: 2 event(s) of 4 on {t.audit}; by {alice} (1), {bob} (1)"
            in by_patient.stdout)
    by_name = cli(settings, "audit", "--reviewer", "bob", "--json")
    events = [orjson.loads(line) for line in by_name.stdout.splitlines()]
    assert [(e["action"], e["reviewer"]) for e in events] == [
        ("sign_in", bob), ("view_cell", bob)]
    assert events[0]["session"] == events[1]["session"]
    assert cli(settings, "audit").returncode == 2  # a question is needed


async def test_a_view_the_trail_does_not_acknowledge_is_not_served(
        broker: TestBroker, bootstrap: str, tmp_path: Path) -> None:
    """The trail's topic takes no record (``max.message.bytes=1``): the broker refuses
    every audit write, so no view is acknowledged and none may be served."""
    if isinstance(broker, EmbeddedBroker):
        pytest.skip("the embedded broker does not enforce max.message.bytes")
    (tmp_path / "charts" / "P033").mkdir(parents=True)
    (tmp_path / "charts" / "P033" / "n-1.txt").write_text(NOTE, encoding="utf-8")
    reviewers = tmp_path / "reviewers.txt"
    token = add_reviewer(reviewers, "alice")
    settings = test_settings(bootstrap, charts_dir=tmp_path / "charts")
    admin = kafka_clients.admin(settings.kafka)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(settings.topics.audit, 1, 1,
                                            topic_configs={"max.message.bytes": "1"})])
    finally:
        await admin.close()
    await ensure_topics(settings)
    t = settings.topics
    await produce(bootstrap, t.judge_jobs, [(b"k", orjson.dumps(job("r-top")))])
    await produce(bootstrap, t.judge_results, [(b"t2d|P033|diabetes_type",
                                                orjson.dumps(result("r-top", "P033")))])
    proc, url = start_dashboard(settings, tmp_path / "dashboard.log",
                                ["--port", "0", "--reviewers", str(reviewers)])
    try:
        async with aiohttp.ClientSession() as http, http.get(  # no recorded sign-in, no session
                url + "auth", params={"token": token}, allow_redirects=False) as signed:
            assert signed.status == 503 and "judgeflow_dashboard" not in signed.cookies
        status, body = await open_cell(url, token, "r-top", sign_in=False)
    finally:
        proc.kill()
    assert status == 503, body[:300]
    assert "audit trail" in orjson.loads(body)["error"]
    assert "PHI-MARKER" not in body and "Quill" not in body
    assert await collect(bootstrap, t.audit, timeout=3, quiet=0.5) == []

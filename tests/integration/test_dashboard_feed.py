"""The dashboard process on its own broker: it survives a broker restart, reads the work list
(the results) from the topics' beginning by default, and keeps only ``--window`` records of
decided or superseded cells, never a pending cell's result however old (issue 18)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest

from streams.topics import ensure_topics
from tests.helpers import produce, test_settings
from tools.broker import EmbeddedBroker
from tools.dashboard_launch import start_dashboard

pytestmark = pytest.mark.integration


def result(rid: str, patient: str = "p") -> bytes:
    return orjson.dumps({"result_id": rid, "job_id": f"j-{rid}", "task_id": "t",
                         "patient_id": patient, "field_id": "f", "kind": "disagreement",
                         "status": "ok", "analysis": {}, "prompt_version": "v1"})


async def api(session: aiohttp.ClientSession, url: str) -> Any:
    async with session.get(url) as resp:
        return await resp.json()


async def wait_for(session: aiohttp.ClientSession, url: str, check: Any,
                   timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = await api(session, url)
            if check(last):
                return last
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.1)
    raise AssertionError(f"condition not met; last answer: {last}")


def ids(rows: Any) -> list[str]:
    return [r["id"] for r in rows["rows"]]


async def test_the_page_follows_across_a_broker_restart_and_keeps_its_work_list(
        tmp_path: Path) -> None:
    # EmbeddedBroker start/stop run their own event loop: keep them off this one
    broker = await asyncio.to_thread(EmbeddedBroker(data_dir=tmp_path / "broker").start)
    try:
        settings = test_settings(broker.bootstrap)
        await ensure_topics(settings)
        topic = settings.topics.judge_results
        # another cell's result, there before the page starts: pending work, and the oldest
        await produce(broker.bootstrap, topic, [(b"k", result("before-start", "q"))])
        proc, url = start_dashboard(settings, tmp_path / "dash.log",
                                    ["--port", "0", "--window", "3"])
        try:
            async with aiohttp.ClientSession() as session:
                await wait_for(session, url + "api/rows",
                               lambda r: ids(r) == ["before-start"])  # read whole by default
                await produce(broker.bootstrap, topic, [(b"k", result("r1"))])
                await wait_for(session, url + "api/rows",
                               lambda r: ids(r) == ["r1", "before-start"])
                # later partition look-ups must not rewind the feed (re-reading old records)
                scans = (await api(session, url + "api/health"))["feed"]["scans"]
                health = await wait_for(session, url + "api/health",
                                        lambda h: h["feed"]["scans"] >= scans + 2)
                assert health["feed"]["records"] == 2

                await asyncio.to_thread(broker.stop)
                await asyncio.to_thread(broker.start)  # same port, same data
                await produce(broker.bootstrap, topic,
                              [(b"k", result(f"r{i}")) for i in range(2, 6)])
                rows = await wait_for(session, url + "api/rows",
                                      lambda r: ids(r)[:1] == ["r5"], timeout=90)
                # --window 3: cell p's superseded results go, the pending cell q stays
                assert ids(rows) == ["r5", "r4", "before-start"]
                queue = await api(session, url + "api/queue")
                assert queue["total"] == 2
        finally:
            proc.kill()
        # --from-beginning reads what was there before it started
        proc, url = start_dashboard(settings, tmp_path / "dash2.log",
                                    ["--port", "0", "--from-beginning"])
        try:
            async with aiohttp.ClientSession() as session:
                rows = await wait_for(session, url + "api/rows",
                                      lambda r: "before-start" in ids(r))
                assert {"before-start", "r1", "r2", "r3", "r4", "r5"} <= set(ids(rows))
        finally:
            proc.kill()
    finally:
        await asyncio.to_thread(broker.stop)

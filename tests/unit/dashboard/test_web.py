"""The web edge without a broker: headers, the token, PHI-free access logs, the JSON API."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from agents.context.charts import ChartStore
from dashboard.feed import FeedStatus, Hub, absorb
from dashboard.security import AccessLogger, access_log, check_bind
from dashboard.sessions import SESSION_COOKIE, Access
from dashboard.web import State, create_app
from dashboard.window import RESULTS, Window
from tests.unit.dashboard.audit_sink import RecordedAudit

TOKEN = "s3cret-token-0123456789"


def state(tmp_path: Path) -> State:
    (tmp_path / "p1").mkdir(exist_ok=True)
    (tmp_path / "p1" / "n1.txt").write_text("HbA1c 9.1% today")
    s = State(Window(10), ChartStore(tmp_path), Hub(), FeedStatus(), audit_trail=RecordedAudit())
    s.window.add(RESULTS, {"result_id": "r1", "patient_id": "p1", "status": "flagged",
                           "analysis": {"reasoning": "<b>why</b>", "evidence_pointers": [
                               {"note_id": "n1", "what_to_look_for": "a1c",
                                "offsets": [0, 10]}]}})
    return s


async def client_for(tmp_path: Path, token: str | None) -> TestClient:  # type: ignore[type-arg]
    s = state(tmp_path)
    s.access = Access(token=token)
    server = TestServer(create_app(s))
    await server.start_server(access_log_class=AccessLogger, access_log=access_log)
    client: TestClient = TestClient(server)  # type: ignore[type-arg]
    await client.start_server()
    return client


@pytest.fixture()
async def open_client(tmp_path: Path) -> AsyncIterator[TestClient]:  # type: ignore[type-arg]
    client = await client_for(tmp_path, None)
    yield client
    await client.close()


@pytest.mark.parametrize(("host", "token", "tls", "ok"), [
    ("127.0.0.1", None, False, True), ("::1", None, False, True),
    ("localhost", None, False, True), ("0.0.0.0", None, True, False),
    ("10.1.2.3", None, True, False), ("0.0.0.0", TOKEN, True, True),
    ("0.0.0.0", TOKEN, False, False), ("0.0.0.0", "short", True, False)])
def test_a_non_loopback_bind_needs_a_long_token_and_tls(host: str, token: str | None,
                                                       tls: bool, ok: bool) -> None:
    if ok:
        check_bind(host, token, tls=tls)
    else:
        with pytest.raises(ValueError):
            check_bind(host, token, tls=tls)


async def test_every_response_has_a_strict_csp(open_client: Any) -> None:
    for path in ("/", "/static/app.js", "/api/rows", "/api/nope"):
        resp = await open_client.get(path)
        csp = resp.headers["Content-Security-Policy"]
        assert "script-src 'self'" in csp and "unsafe" not in csp, path
        assert resp.headers["X-Content-Type-Options"] == "nosniff"
    html = await (await open_client.get("/")).text()
    assert "<script src=\"/static/app.js\"" in html and "<script>" not in html


async def test_the_api_serves_rows_and_the_cell_detail(open_client: Any) -> None:
    rows = await (await open_client.get("/api/rows?status=flagged")).json()
    assert [r["id"] for r in rows["rows"]] == ["r1"]
    assert (await (await open_client.get("/api/rows?status=ok")).json())["rows"] == []
    detail = await (await open_client.get("/api/cell/r1")).json()
    assert detail["reasoning"] == "<b>why</b>"  # JSON data; the page renders it as text
    assert detail["evidence"][0]["note"]["highlight"] == "HbA1c 9.1%"
    assert (await open_client.get("/api/cell/unknown")).status == 404
    assert (await open_client.get("/static/../web.py")).status in (403, 404)


async def test_with_a_token_everything_needs_it(tmp_path: Path) -> None:
    client = await client_for(tmp_path, TOKEN)
    try:
        for path in ("/", "/api/rows", "/events", "/static/app.js"):
            assert (await client.get(path)).status == 401, path
        bad = await client.get("/api/rows", headers={"Authorization": "Bearer nope"})
        assert bad.status == 401
        good = await client.get("/api/rows", headers={"Authorization": f"Bearer {TOKEN}"})
        assert good.status == 200
        assert (await client.get("/auth?token=wrong", allow_redirects=False)).status == 401
        login = await client.get(f"/auth?token={TOKEN}", allow_redirects=False)
        assert login.status == 303
        cookie = login.cookies[SESSION_COOKIE]  # a session id, never the token itself
        assert cookie.value != TOKEN and TOKEN not in cookie.value and cookie["httponly"]
        assert len(cookie.value) >= 40 and cookie["samesite"] == "Strict"
        assert (await client.get("/api/rows")).status == 200  # the cookie jar has it now
    finally:
        await client.close()


async def test_access_log_names_routes_not_ids_or_queries(
        open_client: Any, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=access_log.name):
        await open_client.get("/api/cell/r1?patient=p1")
        await open_client.get("/api/rows?task=secret-task")
    text = "\n".join(r.getMessage() for r in caplog.records if r.name == access_log.name)
    assert "GET /api/cell/{rid} 200" in text and "GET /api/rows 200" in text
    assert "r1" not in text and "p1" not in text and "secret-task" not in text


def test_absorb_counts_bad_records_and_publishes_result_rows() -> None:
    window, hub, status = Window(), Hub(), FeedStatus()
    queue = hub.subscribe()
    absorb(window, hub, RESULTS, b"not json", status)
    absorb(window, hub, RESULTS, b'{"no": "id"}', status)
    absorb(window, hub, RESULTS, b'{"result_id": "r9", "status": "ok"}', status)
    assert (status.records, status.undecodable) == (3, 2)
    item = queue.get_nowait()
    assert item is not None
    event, row = item
    assert event == "result" and row["id"] == "r9"


def test_a_page_that_cannot_keep_up_is_dropped_and_told_to_reconnect() -> None:
    hub = Hub(depth=2)
    queue = hub.subscribe()
    for i in range(3):
        hub.publish("result", {"i": i})
    assert not hub.clients
    items = [queue.get_nowait() for _ in range(queue.qsize())]
    assert items[-1] is None

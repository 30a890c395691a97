"""Every error path of the page server answers ``{"error": "<one line>"}`` as docs/api.md
promises: walked over a real socket (the guarded site), from the connection refused over
the cap to a request aiohttp cannot parse, a foreign Host, no token, a wrong token, no
route, a wrong method, a body too large, CSRF, a missing result and a bug."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from aiohttp import web

from agents.context.charts import ChartStore
from dashboard.feed import FeedStatus, Hub
from dashboard.limits import GuardedSite, Limits
from dashboard.security import AccessLogger, access_log, quiet_server_logs
from dashboard.sessions import Access
from dashboard.web import State, create_app
from dashboard.window import Window
from tests.unit.dashboard.audit_sink import RecordedAudit

TOKEN = "proxy-token-0123456789abcdef"
BEARER = f"Authorization: Bearer {TOKEN}\r\n"


class Boom(Exception):
    """A bug in a handler, carrying text that must not reach the client."""


async def boom(request: web.Request) -> web.Response:
    raise Boom("patient P-SECRET broke it")


@pytest.fixture()
async def port(tmp_path: Path) -> AsyncIterator[int]:
    state = State(Window(10), ChartStore(tmp_path), Hub(), FeedStatus(),
                  audit_trail=RecordedAudit(),
                  limits=Limits(max_connections=4),
                  access=Access(token=TOKEN, user_header="X-Forwarded-User"))
    app = create_app(state)
    app.router.add_get("/api/boom", boom)  # stands for any handler with a bug
    quiet_server_logs()
    runner = web.AppRunner(app, access_log_class=AccessLogger, access_log=access_log,
                           handle_signals=False)
    await runner.setup()
    site = GuardedSite(runner, "127.0.0.1", 0, limits=state.limits)
    await site.start()
    state.guard = site.guard
    yield runner.addresses[0][1]
    await runner.cleanup()


async def send(port: int, data: bytes) -> tuple[int, dict[str, str], bytes]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in
               (line.partition(":") for line in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def request(line: str, headers: str = BEARER, body: bytes = b"",
            host: str = "127.0.0.1") -> bytes:
    length = f"Content-Length: {len(body)}\r\n" if body else ""
    return (f"{line} HTTP/1.1\r\nHost: {host}\r\n{headers}{length}"
            "Connection: close\r\n\r\n").encode() + body


ANONYMOUS = (BEARER + "Origin: http://127.0.0.1\r\nContent-Type: application/json\r\n"
             "Cookie: judgeflow_csrf=c" + "x" * 31 + "\r\nX-CSRF-Token: c" + "x" * 31 + "\r\n")
WRITE = ANONYMOUS + "X-Forwarded-User: alice\r\n"

ERRORS = [
    ("no token", request("GET /api/rows", headers=""), 401),
    ("no token on the page", request("GET /", headers=""), 401),
    ("wrong token at /auth", request("GET /auth?token=wrong-token-0123456789"), 401),
    ("foreign Host", request("GET /api/rows", host="attacker.example"), 421),
    ("no such route", request("GET /api/nope"), 404),
    ("no such static file", request("GET /static/nope.js"), 404),
    ("result not in the window", request("GET /api/cell/r-unknown"), 404),
    ("wrong method", request("DELETE /api/rows"), 405),
    ("bad queue state", request("GET /api/queue?state=weird"), 400),
    ("write without Origin", request("POST /api/adjudications", body=b"{}"), 403),
    ("write without a reviewer", request("POST /api/adjudications", ANONYMOUS, b"{}"), 401),
    ("write that is not JSON", request("POST /api/adjudications", WRITE, b"{"), 400),
    ("body too large", request("POST /api/adjudications", WRITE, b"x" * 70_000), 413),
    ("a bug in a handler", request("GET /api/boom"), 500),
    ("unparsable request line", b"GARBAGE\r\n\r\n", 400),
]


@pytest.mark.parametrize(("what", "raw", "status"), ERRORS, ids=[e[0] for e in ERRORS])
async def test_every_error_is_one_json_line(port: int, what: str, raw: bytes,
                                            status: int) -> None:
    got, headers, body = await send(port, raw)
    assert got == status, (what, body)
    assert headers["content-type"].startswith("application/json"), (what, body)
    answer = json.loads(body)
    assert list(answer) == ["error"] and isinstance(answer["error"], str), what
    assert answer["error"] and "\n" not in answer["error"], what
    assert b"P-SECRET" not in body and b"Traceback" not in body and TOKEN.encode() not in body
    if what.startswith("no token"):
        assert headers["www-authenticate"] == "Bearer"  # headers of the error are kept
    if status == 405:
        assert "GET" in headers["allow"]


async def test_a_refused_connection_answers_json_too(port: int) -> None:
    held = [await asyncio.open_connection("127.0.0.1", port) for _ in range(4)]
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head, _, body = (await asyncio.wait_for(reader.read(), 5)).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 503") and b"application/json" in head
    assert json.loads(body) == {"error": "too many connections"}
    for _, w in [*held, (reader, writer)]:
        w.close()

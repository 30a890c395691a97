"""The page on a hostile network, attacked over real sockets (no broker needed): DNS
rebinding through a foreign Host, connection floods, too many live pages, slow and idle
clients, an oversized request line carrying a token, clients that leave mid-response,
the session cookie, TLS, and the refusal to serve off loopback without TLS."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
import struct
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import cast

import aiohttp
import pytest
from aiohttp import web

from agents.context.charts import ChartStore
from cli.main import main
from dashboard.feed import FeedStatus, Hub
from dashboard.limits import Guard, GuardedSite, Limits, _Conn
from dashboard.peers import LOOPBACK, client_of
from dashboard.security import TOKEN_ENV, AccessLogger, access_log, quiet_server_logs
from dashboard.sessions import SESSION_COOKIE, Access
from dashboard.web import State, create_app
from dashboard.window import RESULTS, Window
from tests.helpers import own_records
from tests.unit.dashboard.audit_sink import RecordedAudit

TOKEN = "proxy-token-0123456789abcdef"


class Server:
    def __init__(self, runner: web.AppRunner, site: GuardedSite, state: State) -> None:
        self.runner, self.site, self.state = runner, site, state
        self.port = runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{self.port}/"


async def start(tmp_path: Path, limits: Limits, access: Access | None = None,
                tls: ssl.SSLContext | None = None) -> Server:
    state = State(Window(10), ChartStore(tmp_path), Hub(), FeedStatus(), limits=limits,
                  access=access or Access(), audit_trail=RecordedAudit())
    state.window.add(RESULTS, {"result_id": "r1", "patient_id": "P-SECRET", "status": "ok"})
    quiet_server_logs()
    runner = web.AppRunner(create_app(state), access_log_class=AccessLogger,
                           access_log=access_log, handle_signals=False,
                           keepalive_timeout=30, handler_cancellation=True)  # the guard acts
    await runner.setup()
    site = GuardedSite(runner, "127.0.0.1", 0, limits=limits, ssl_context=tls)
    await site.start()
    state.guard = site.guard
    return Server(runner, site, state)


@pytest.fixture()
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    srv = await start(tmp_path, Limits(max_connections=8, max_streams=2, header_timeout=0.6,
                                       idle_timeout=1.0, sweep_every=0.05))
    yield srv
    await srv.runner.cleanup()


async def raw(port: int, data: bytes, read: bool = True) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    out = await asyncio.wait_for(reader.read(), 10) if read else b""
    writer.close()
    return out


async def test_a_foreign_host_header_gets_no_patient_data(server: Server) -> None:
    evil = await raw(server.port, b"GET /api/rows HTTP/1.1\r\nHost: attacker.example\r\n"
                     b"Connection: close\r\n\r\n")
    assert evil.startswith(b"HTTP/1.1 421") and b"P-SECRET" not in evil
    for host in (b"127.0.0.1:1", b"localhost", b"[::1]:8765"):
        ok = await raw(server.port, b"GET /api/rows HTTP/1.1\r\nHost: " + host +
                       b"\r\nConnection: close\r\n\r\n")
        assert ok.startswith(b"HTTP/1.1 200") and b"P-SECRET" in ok, host


async def test_a_connection_flood_is_refused_cleanly_and_the_page_recovers(
        server: Server) -> None:
    held = [await asyncio.open_connection("127.0.0.1", server.port) for _ in range(8)]
    reader, _ = await asyncio.open_connection("127.0.0.1", server.port)
    refused = await asyncio.wait_for(reader.read(), 5)
    assert refused.startswith(b"HTTP/1.1 503") and b"too many connections" in refused
    assert server.site.guard is not None and server.site.guard.refused == 1
    for _, w in held:
        w.close()
    async with aiohttp.ClientSession() as session:
        for _ in range(50):
            try:
                async with session.get(server.url + "api/health") as resp:
                    if resp.status == 200:
                        break
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.05)
        assert resp.status == 200


async def test_one_client_cannot_hold_every_connection(tmp_path: Path) -> None:
    """Issue 25: one client gets its share, then 503, and the share is given back on close.
    A local process is one client whatever loopback address it binds: 127.0.0.2 and
    127.0.0.3 do not get a share of their own (they did, counted by exact address)."""
    srv = await start(tmp_path, Limits(max_connections=8, max_per_client=3))
    try:
        held = [await asyncio.open_connection("127.0.0.1", srv.port) for _ in range(3)]
        reader, _ = await asyncio.open_connection("127.0.0.1", srv.port)
        refused = await asyncio.wait_for(reader.read(), 5)
        assert refused.startswith(b"HTTP/1.1 503") and b"too many connections" in refused
        guard = srv.site.guard
        assert guard is not None and guard.refused_client == 1
        for source in ("127.0.0.2", "127.0.0.3"):
            other = await raw_from(source, srv.port, b"GET /api/health HTTP/1.1\r\n"
                                   b"Host: 127.0.0.1\r\nConnection: close\r\n\r\n")
            assert other.startswith(b"HTTP/1.1 503"), (source, other[:40])
        assert guard.refused_client == 3
        for _, w in held:
            w.close()
        for _ in range(100):  # the server sees the closes
            if guard.per_client.get(LOOPBACK, 0) == 0:
                break
            await asyncio.sleep(0.02)
        again = await raw_from("127.0.0.2", srv.port, b"GET /api/health HTTP/1.1\r\n"
                               b"Host: 127.0.0.1\r\nConnection: close\r\n\r\n")
        assert again.startswith(b"HTTP/1.1 200"), again[:40]
    finally:
        await srv.runner.cleanup()


@pytest.mark.parametrize(("peer", "client"), [
    ("127.0.0.1", LOOPBACK), ("127.0.0.2", LOOPBACK), ("127.255.255.254", LOOPBACK),
    ("::1", LOOPBACK), ("::ffff:127.0.0.1", LOOPBACK), ("::ffff:127.9.9.9", LOOPBACK),
    ("10.0.0.7", "10.0.0.7"), ("::ffff:10.0.0.7", "10.0.0.7"),
    ("2001:db8:1:2::1", "2001:db8:1:2::/64"), ("2001:db8:1:2:aaaa::9", "2001:db8:1:2::/64"),
    ("2001:db8:1:3::1", "2001:db8:1:3::/64"), ("fe80::1%eth0", "fe80::/64"),
    ("not-an-ip", "not-an-ip")])
def test_peers_count_as_their_client(peer: str, client: str) -> None:
    assert client_of(peer) == client


async def test_another_client_gets_in_while_one_holds_its_share() -> None:
    """The cap is per client: 10.0.0.7 (and its IPv6-mapped form) is refused at its share,
    10.0.0.8 and another /64 are not."""
    guard = Guard(cast(web.Server, None), Limits(max_connections=8, max_per_client=2))

    class Peer(asyncio.Transport):
        def __init__(self, host: str) -> None:
            super().__init__()
            self.host = host

        def get_extra_info(self, name: str, default: object = None) -> object:
            return (self.host, 4242) if name == "peername" else default

    assert guard.opened(Peer("10.0.0.7")) and guard.opened(Peer("::ffff:10.0.0.7"))
    assert not guard.opened(Peer("10.0.0.7"))
    assert guard.opened(Peer("10.0.0.8"))
    assert guard.opened(Peer("2001:db8::1")) and guard.opened(Peer("2001:db8::2"))
    assert not guard.opened(Peer("2001:db8::3"))
    assert guard.opened(Peer("2001:db8:0:1::1"))
    assert guard.refused_client == 2


async def raw_from(source: str, port: int, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    writer.write(data)
    await writer.drain()
    out = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return out


async def test_live_pages_are_capped_with_a_clean_503(server: Server) -> None:
    async with aiohttp.ClientSession() as session:
        streams = [await session.get(server.url + "events") for _ in range(2)]
        assert all(s.status == 200 for s in streams)
        for s in streams:
            await s.content.readline()  # subscribed
        async with session.get(server.url + "events") as third:
            assert third.status == 503 and "too many" in (await third.json())["error"]
        for s in streams:
            s.close()


#: small, distinct timeouts so each close can be told apart (and the tests stay fast)
TIMEOUTS = Limits(header_timeout=0.3, idle_timeout=1.2, sweep_every=0.05)


async def closed_after(reader: asyncio.StreamReader, since: float) -> float:
    """Seconds from ``since`` until the server closed the connection (waits for the close)."""
    with contextlib.suppress(ConnectionResetError):
        await asyncio.wait_for(reader.read(), 10)
    return asyncio.get_running_loop().time() - since


@pytest.mark.parametrize("sent", [b"", b"GET /api/rows HT", b"GET /api/rows HTTP/1.1\r\n"
                                  b"Host: 127.0.0.1\r\n"],
                         ids=["nothing", "half a request line", "headers without the end"])
async def test_a_first_request_that_does_not_arrive_is_closed_at_the_header_timeout(
        tmp_path: Path, sent: bytes) -> None:
    """Silent, or a request line or headers begun and never finished: closed at the header
    timeout (10 s by default), not kept until the idle timeout (30 s)."""
    srv = await start(tmp_path, TIMEOUTS)
    try:
        t0 = asyncio.get_running_loop().time()
        reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
        writer.write(sent)
        await writer.drain()
        waited = await closed_after(reader, t0)
        assert srv.site.guard is not None
        assert srv.site.guard.closed_for == {"header": 1, "idle": 0}
        assert waited >= TIMEOUTS.header_timeout
        writer.close()
    finally:
        await srv.runner.cleanup()


async def test_a_keep_alive_connection_is_closed_at_the_idle_timeout(tmp_path: Path) -> None:
    """After a response the connection may wait for the next request for the idle timeout,
    longer than the header timeout; then it is closed as idle."""
    srv = await start(tmp_path, TIMEOUTS)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", srv.port)
        t0 = asyncio.get_running_loop().time()
        writer.write(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        assert head.startswith(b"HTTP/1.1 200")
        waited = await closed_after(reader, t0)
        assert srv.site.guard is not None
        assert srv.site.guard.closed_for == {"header": 0, "idle": 1}
        assert waited >= TIMEOUTS.idle_timeout
        writer.close()
    finally:
        await srv.runner.cleanup()


def conn(waiting_since: float | None, first_byte: float | None = None,
         served: int = 0) -> _Conn:
    return _Conn(cast(asyncio.Transport, None), waiting_since, first_byte, served=served)


#: (connection, seconds later, why it is closed then); header 10 s, idle 30 s (the defaults)
OVERDUE = [
    (conn(0.0), 9.9, None), (conn(0.0), 10.1, "header"),  # a new, silent connection
    (conn(0.0, first_byte=5.0), 14.9, None), (conn(0.0, first_byte=5.0), 15.1, "header"),
    (conn(0.0, served=1), 10.1, None), (conn(0.0, served=1), 30.1, "idle"),  # keep-alive
    (conn(0.0, first_byte=20.0, served=1), 30.1, "header"),  # the 2nd request's headers
    (conn(None, served=1), 3600.0, None),  # a request in progress: the event stream
]


@pytest.mark.parametrize(("c", "later", "why"), OVERDUE)
def test_which_timeout_applies(c: _Conn, later: float, why: str | None) -> None:
    guard = Guard(cast(web.Server, None), Limits())
    assert guard.overdue(c, later) == why


async def test_a_live_stream_outlives_every_timeout(server: Server) -> None:
    async with aiohttp.ClientSession() as session, session.get(server.url + "events") as stream:
        await stream.content.readline()
        guard = server.site.guard
        assert guard is not None
        # a sweep an hour later (past both timeouts) leaves it: the stream is a request
        guard.sweep(asyncio.get_running_loop().time() + 3600)
        assert guard.timed_out == 0
        server.state.hub.publish("calibration", {})
        line = await asyncio.wait_for(stream.content.readline(), 5)
        while line in (b"\n", b": connected\n"):
            line = await asyncio.wait_for(stream.content.readline(), 5)
        assert line == b"event: calibration\n"


async def test_no_token_or_query_in_any_log_line_and_no_traceback_for_leavers(
        server: Server, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        huge = b"GET /auth?token=" + TOKEN.encode() + b"&pad=" + b"x" * 9000 + b" HTTP/1.1\r\n"
        answer = await raw(server.port, huge + b"Host: 127.0.0.1\r\n\r\n")
        assert answer.startswith((b"HTTP/1.1 4", b"HTTP/1.0 4"))
        await raw(server.port, b"GET /api/cell/r1?patient=P-SECRET HTTP/1.1\r\nHost: "
                  b"127.0.0.1\r\nConnection: close\r\n\r\n")
        for path in [b"/events"] * 10 + [b"/static/app.js"] * 10:  # leave with a reset
            reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
            writer.write(b"GET " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            await reader.read(100)
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        for _ in range(100):  # the pages that left free their streams (no keep-alive wait)
            server.state.hub.publish("calibration", {})
            if not server.state.hub.clients:
                break
            await asyncio.sleep(0.05)
    assert not server.state.hub.clients
    lines = [r.getMessage() for r in caplog.records]
    text = "\n".join(lines)
    assert TOKEN not in text and "token=" not in text and "pad=" not in text
    assert "P-SECRET" not in text and "?" not in "".join(
        r.getMessage() for r in caplog.records if r.name == access_log.name)
    ours = own_records(caplog.records)
    assert not [r for r in ours if r.exc_info or r.exc_text], text
    assert not [r for r in ours if r.levelno >= logging.ERROR], text


def self_signed(tmp_path: Path) -> tuple[Path, Path]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    return cert, key


async def test_over_tls_the_cookie_is_a_secure_session_id(tmp_path: Path) -> None:
    from dashboard.server import tls_context

    cert, key = self_signed(tmp_path)
    srv = await start(tmp_path, Limits(), Access(token=TOKEN), tls=tls_context(cert, key))
    client_ctx = ssl.create_default_context(cafile=str(cert))
    try:
        url = f"https://127.0.0.1:{srv.port}/"
        jar = aiohttp.CookieJar(unsafe=True)  # a browser keeps cookies of an IP address too
        async with aiohttp.ClientSession(cookie_jar=jar) as session:
            async with session.get(url + "api/rows", ssl=client_ctx) as resp:
                assert resp.status == 401
            async with session.get(url + "auth", params={"token": TOKEN}, ssl=client_ctx,
                                   allow_redirects=False) as resp:
                assert resp.status == 303
                cookie = resp.cookies[SESSION_COOKIE]
                assert cookie["secure"] and cookie["httponly"] and TOKEN not in cookie.value
            async with session.get(url + "api/rows", ssl=client_ctx) as resp:
                assert resp.status == 200  # the session works
        with pytest.raises(aiohttp.ClientError):  # plain HTTP on the TLS port gets nothing
            async with aiohttp.ClientSession() as session, session.get(
                    f"http://127.0.0.1:{srv.port}/api/rows") as resp:
                await resp.read()
    finally:
        await srv.runner.cleanup()


@pytest.mark.parametrize(("args", "says"), [
    (["--host", "0.0.0.0"], "without TLS"),
    (["--host", "0.0.0.0", "--tls-cert", "c.pem"], "go together"),
    (["--host", "0.0.0.0", "--tls-cert", "nope.pem", "--tls-key", "nope.pem"],
     "cannot load"),
])
def test_off_loopback_without_tls_is_refused(args: list[str], says: str,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    assert main(["dashboard", *args]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err and TOKEN not in err


def test_the_sso_header_off_loopback_needs_the_proxy_token(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    (tmp_path / "r").write_text("alice sha256:" + "0" * 64 + "\n")
    monkeypatch.setenv("JUDGEFLOW_DASHBOARD_USER_HEADER", "X-Forwarded-User")
    assert main(["dashboard", "--host", "0.0.0.0", "--reviewers", str(tmp_path / "r"),
                 "--tls-cert", str(cert), "--tls-key", str(key)]) == 2
    assert "SSO header" in capsys.readouterr().err

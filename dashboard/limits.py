"""Connection limits for a page that faces a hostile network.

aiohttp has no cap on connections and no deadline for a request's headers, so a few hundred
slow or idle sockets could hold the page. :class:`GuardedSite` wraps aiohttp's protocol
factory: beyond ``max_connections`` a new connection gets a plain ``503`` and is closed, and
so does one beyond ``max_per_client`` from one client (:func:`dashboard.peers.client_of`:
all loopback addresses are one client, IPv6 counts by /64; so that no one client, a local
one included, can hold every connection and lock the reviewers out); a
sweeper (every ``sweep_every`` seconds) closes connections whose request headers have not
arrived within ``header_timeout`` (counted from the first byte of a request, or from the
connection for the first request: a client that connects and says nothing, or sends half a
request line and stops, is closed then) and keep-alive connections idle for ``idle_timeout``
after a response. A request whose headers were read is marked by :func:`request_started` (a
middleware), so long responses (the event stream) are never cut; their number is capped by
the event handler itself. ``Guard.closed_for`` counts the closes per reason.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Middleware
from aiohttp.web_protocol import RequestHandler

from dashboard.errors import REFUSAL_BODY, protocol_error
from dashboard.peers import client_of

#: Largest request body (an adjudication is a few KiB); a bigger one is refused with 413.
MAX_BODY = 64 * 1024
REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
           b"Retry-After: 5\r\nConnection: close\r\nContent-Length: "
           + str(len(REFUSAL_BODY)).encode() + b"\r\n\r\n" + REFUSAL_BODY)


@dataclass
class Limits:
    max_connections: int = 256
    #: open connections of one client at most (a quarter of the default total; see
    #: :func:`dashboard.peers.client_of`)
    max_per_client: int = 64
    max_streams: int = 64
    header_timeout: float = 10.0
    idle_timeout: float = 30.0
    body_timeout: float = 10.0
    #: how often the sweeper looks (tests make every timeout small, this too)
    sweep_every: float = 0.5


@dataclass
class _Conn:
    transport: asyncio.Transport
    #: when the connection started waiting for a request (None while one is handled)
    waiting_since: float | None
    first_byte: float | None = None
    active: int = 0
    #: requests whose headers were read: 0 means the first request is still awaited
    served: int = 0
    #: the client's address (its connections are counted against ``max_per_client``)
    client: str = ""


class _Refuser(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(REFUSAL)
        transport.close()


class _GuardedHandler(RequestHandler):
    """aiohttp's handler (slotted) plus the guard's bookkeeping of its connection."""

    jf_guard: Guard

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.jf_transport = transport
        admitted = self.jf_guard.opened(transport)
        super().connection_made(transport)
        if not admitted:  # the client's address holds its share of connections already
            assert isinstance(transport, asyncio.Transport)
            transport.write(REFUSAL)
            transport.close()

    def data_received(self, data: bytes) -> None:
        self.jf_guard.received(self.jf_transport)
        super().data_received(data)

    def connection_lost(self, exc: BaseException | None) -> None:
        self.jf_guard.closed(self.jf_transport)
        super().connection_lost(exc)

    def handle_error(self, request: Any, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        """aiohttp's own answer to a request it could not parse, as JSON (logged as before:
        the exception type only, :class:`dashboard.security.ServerLogFilter`)."""
        super().handle_error(request, status, exc, message)  # logs; raises if already sent
        return protocol_error(status)


class Guard:
    """Counts connections, refuses beyond the cap, closes slow and idle ones."""

    def __init__(self, server: web.Server, limits: Limits) -> None:
        self.server, self.limits = server, limits
        self.conns: dict[int, _Conn] = {}
        #: open connections per client (:func:`dashboard.peers.client_of`)
        self.per_client: dict[str, int] = {}
        self.refused = 0
        #: of ``refused``, those refused for the client's own share
        self.refused_client = 0
        self.timed_out = 0
        #: closes per reason: "header" (a request's headers too slow, or none on a new
        #: connection), "idle" (a keep-alive connection unused after a response)
        self.closed_for: dict[str, int] = {"header": 0, "idle": 0}
        self._sweeper: asyncio.Task[None] | None = None

    def __call__(self) -> asyncio.Protocol:
        if len(self.conns) >= self.limits.max_connections:
            self.refused += 1
            return _Refuser()
        server: Any = self.server
        handler = _GuardedHandler(server, loop=server._loop, **server._kwargs)
        handler.jf_guard = self
        return handler

    def opened(self, transport: asyncio.BaseTransport) -> bool:
        """Count a new connection; False (not counted: it is to be refused) when its
        client holds ``max_per_client`` connections already."""
        assert isinstance(transport, asyncio.Transport)
        peer = transport.get_extra_info("peername")
        client = client_of(str(peer[0])) if isinstance(peer, tuple) and peer else ""
        if self.per_client.get(client, 0) >= self.limits.max_per_client:
            self.refused += 1
            self.refused_client += 1
            return False
        self.per_client[client] = self.per_client.get(client, 0) + 1
        self.conns[id(transport)] = _Conn(transport, asyncio.get_running_loop().time(),
                                          client=client)
        return True

    def received(self, transport: object) -> None:
        conn = self.conns.get(id(transport))
        if conn is not None and conn.waiting_since is not None and conn.first_byte is None:
            conn.first_byte = asyncio.get_running_loop().time()

    def closed(self, transport: object) -> None:
        conn = self.conns.pop(id(transport), None)
        if conn is not None:
            left = self.per_client.get(conn.client, 1) - 1
            if left > 0:
                self.per_client[conn.client] = left
            else:
                self.per_client.pop(conn.client, None)

    def begin(self, transport: Any) -> None:
        conn = self.conns.get(id(transport))
        if conn is not None:
            conn.active += 1
            conn.served += 1
            conn.waiting_since = conn.first_byte = None

    def end(self, transport: Any) -> None:
        conn = self.conns.get(id(transport))
        if conn is not None:
            conn.active -= 1
            if conn.active <= 0:
                conn.waiting_since = asyncio.get_running_loop().time()

    def overdue(self, conn: _Conn, now: float) -> str | None:
        """Why ``conn`` must be closed at ``now`` ("header", "idle"), None while it may stay."""
        if conn.waiting_since is None:  # a request is being handled (or streamed)
            return None
        if conn.first_byte is not None:  # a request has begun: its headers are due
            return "header" if now - conn.first_byte > self.limits.header_timeout else None
        if conn.served == 0:  # a new connection owes its first request line
            return "header" if now - conn.waiting_since > self.limits.header_timeout else None
        return "idle" if now - conn.waiting_since > self.limits.idle_timeout else None

    def sweep(self, now: float) -> None:
        for conn in list(self.conns.values()):
            reason = self.overdue(conn, now)
            if reason is not None:
                self.timed_out += 1
                self.closed_for[reason] += 1
                conn.transport.abort()

    async def run_sweeper(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(self.limits.sweep_every)  # a timer, not a wait in a test
            self.sweep(loop.time())

    def start(self) -> None:
        self._sweeper = asyncio.create_task(self.run_sweeper())

    async def stop(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper


def request_started(guard_of: Callable[[web.Request], Guard | None]) -> Middleware:
    @web.middleware
    async def mark(request: web.Request,
                   handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                   ) -> web.StreamResponse:
        guard = guard_of(request)
        if guard is None:
            return await handler(request)
        guard.begin(request.transport)
        try:
            return await handler(request)
        finally:
            guard.end(request.transport)
    return mark


class GuardedSite(web.TCPSite):
    """A TCP site whose connections go through a :class:`Guard`."""

    def __init__(self, runner: web.BaseRunner, host: str, port: int, *, limits: Limits,
                 **kw: Any) -> None:
        super().__init__(runner, host, port, **kw)
        self.limits = limits
        self.guard: Guard | None = None

    async def start(self) -> None:
        await web.BaseSite.start(self)
        server = self._runner.server
        assert server is not None
        loop = asyncio.get_running_loop()
        self.guard = Guard(server, self.limits)
        self.guard.start()
        self._server = await loop.create_server(
            self.guard, self._host, self._port, ssl=self._ssl_context, backlog=self._backlog,
            reuse_address=self._reuse_address, reuse_port=self._reuse_port,
            ssl_handshake_timeout=self.limits.header_timeout if self._ssl_context else None)

    async def stop(self) -> None:
        if self.guard is not None:
            await self.guard.stop()
        await super().stop()

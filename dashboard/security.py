"""The page shows patient data: headers, the bearer token and PHI-free access logs.

* Every response carries a strict Content-Security-Policy: scripts and styles only from
  our own files (no inline code, no eval), no frames, no form posts, no third parties.
* Off loopback the page needs a credential (a bearer token or a reviewers file) and TLS:
  :func:`check_bind` refuses to start otherwise (tokens and patient data are not sent in
  clear text over a network). Access and sessions: :mod:`dashboard.sessions`.
* Only the ``Host`` names of :func:`allowed_hosts` are answered (421 otherwise), so a page on
  another site cannot reach this one through DNS rebinding.
* The access log names the route template (``/api/cell/{rid}``), never the query string or
  an id from the path; aiohttp's own error lines are cut to the exception type
  (:class:`ServerLogFilter`): a bad request line would otherwise be logged with its text,
  the token of ``/auth?token=`` included. A client that leaves early is not an error.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Awaitable, Callable, Iterable

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger
from aiohttp.http_exceptions import HttpProcessingError
from aiohttp.typedefs import Middleware

from dashboard.identity import TOKEN_ENV

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
           "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
           "Cache-Control": "no-store"}
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]



def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None, *, reviewers: bool = False, tls: bool = False,
               user_header: bool = False) -> None:
    """Refuse to serve patient data beyond this machine without a credential and TLS."""
    if token is not None and len(token) < 16:
        raise ValueError(f"{TOKEN_ENV} must be at least 16 characters")
    if is_loopback(host):
        return
    if not token and not reviewers:
        raise ValueError(f"refusing to bind {host} without a token: set {TOKEN_ENV} or "
                         "give --reviewers FILE (or bind 127.0.0.1)")
    if user_header and not token:
        raise ValueError(f"refusing to trust the SSO header on {host} without {TOKEN_ENV}: "
                         "the proxy must prove itself with the bearer token")
    if not tls:
        raise ValueError(f"refusing to serve {host} without TLS: give --tls-cert and "
                         "--tls-key (or bind 127.0.0.1 behind a TLS proxy on this host)")


def allowed_hosts(bind: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """Host names the page answers to: the loopback names, the bound address, ``extra``."""
    names = {"localhost", "127.0.0.1", "::1", bind.lower().strip("[]")}
    names.discard("0.0.0.0")
    names.discard("::")
    return frozenset(names | {h.lower().strip("[]") for h in extra})


def host_name(header: str) -> str:
    """``Host`` without its port: ``[::1]:8765`` -> ``::1``, ``a.example:80`` -> ``a.example``."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


def host_middleware(allowed: frozenset[str]) -> Middleware:
    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        if host_name(request.headers.get("Host", "")) not in allowed:
            raise web.HTTPMisdirectedRequest(text="this host name is not served here\n")
        return await handler(request)
    return check


async def add_headers(request: web.Request, response: web.StreamResponse) -> None:
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)


class AccessLogger(AbstractAccessLogger):
    """``GET /api/cell/{rid} 200 3ms``: route templates only, so no ids and no queries."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse,
            time: float) -> None:
        route = "-"
        try:
            match = getattr(request, "match_info", None)
        except AssertionError:  # a request aiohttp could not parse has no route at all
            match = None
        resource = match.route.resource if match is not None else None
        if resource is not None:
            route = resource.canonical
        self.logger.info("%s %s %d %.0fms", request.method, route, response.status,
                         time * 1000)


access_log = logging.getLogger("judgeflow.dashboard.access")
#: A client that went away mid-response: ordinary on a network, not an error.
GONE = (ConnectionResetError, BrokenPipeError, asyncio.CancelledError, TimeoutError)


class ServerLogFilter(logging.Filter):
    """aiohttp's own lines: the exception type only (no request text, no traceback)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, GONE) or "ClientConnectionReset" in type(exc).__name__:
            return False
        kind = type(exc).__name__ if exc is not None else "no exception"
        if isinstance(exc, HttpProcessingError):  # the client's mistake, answered with a 4xx
            record.levelno, record.levelname = logging.INFO, "INFO"
            record.msg = f"bad request ({kind})"
        else:
            record.msg = f"request failed ({kind})"
        record.args, record.exc_info, record.exc_text = (), None, None
        record.stack_info = None
        return True


def quiet_server_logs() -> None:
    for name in ("aiohttp.server", "aiohttp.web", "aiohttp.access"):
        logger = logging.getLogger(name)
        if not any(isinstance(f, ServerLogFilter) for f in logger.filters):
            logger.addFilter(ServerLogFilter())

"""The page shows patient data: headers, the bearer token and PHI-free access logs.

* Every response carries a strict Content-Security-Policy: scripts and styles only from
  our own files (no inline code, no eval), no frames, no form posts, no third parties.
* When a token is configured (required off loopback), every request must carry it as
  ``Authorization: Bearer <token>`` or in the HttpOnly cookie that ``/auth`` sets (the
  browser's EventSource cannot send headers).
* The access log names the route template (``/api/cell/{rid}``), never the query string or
  an id from the path.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.abc import AbstractAccessLogger
from aiohttp.typedefs import Middleware

COOKIE = "judgeflow_dashboard"
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
       "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
           "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY",
           "Cache-Control": "no-store"}
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

#: The bearer token a non-loopback bind requires (an environment variable, never a setting).
TOKEN_ENV = "JUDGEFLOW_DASHBOARD_TOKEN"


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse to serve patient data beyond this machine without a token."""
    if not is_loopback(host) and not token:
        raise ValueError(f"refusing to bind {host} without a token: set "
                         "JUDGEFLOW_DASHBOARD_TOKEN (or bind 127.0.0.1)")
    if token is not None and len(token) < 16:
        raise ValueError("JUDGEFLOW_DASHBOARD_TOKEN must be at least 16 characters")


async def add_headers(request: web.Request, response: web.StreamResponse) -> None:
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)


def _presented(request: web.Request) -> str:
    auth = request.headers.get("Authorization", "")
    if auth.startswith("Bearer "):
        return auth[len("Bearer "):].strip()
    return request.cookies.get(COOKIE, "")


def auth_middleware(token: str | None) -> Middleware:
    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        if token is None:
            return await handler(request)
        if request.path == "/auth":
            given = request.query.get("token", "")
            if not hmac.compare_digest(given.encode(), token.encode()):
                raise web.HTTPUnauthorized(text="wrong token\n")
            response = web.HTTPSeeOther("/")
            response.set_cookie(COOKIE, token, httponly=True, samesite="Strict",
                                secure=request.secure, path="/")
            return response
        if not hmac.compare_digest(_presented(request).encode(), token.encode()):
            raise web.HTTPUnauthorized(
                text="a bearer token is required (open /auth?token=... once)\n",
                headers={"WWW-Authenticate": "Bearer"})
        return await handler(request)
    return check


class AccessLogger(AbstractAccessLogger):
    """``GET /api/cell/{rid} 200 3ms``: route templates only, so no ids and no queries."""

    def log(self, request: web.BaseRequest, response: web.StreamResponse,
            time: float) -> None:
        route = "-"
        match = getattr(request, "match_info", None)
        resource = match.route.resource if match is not None else None
        if resource is not None:
            route = resource.canonical
        self.logger.info("%s %s %d %.0fms", request.method, route, response.status,
                         time * 1000)


access_log = logging.getLogger("judgeflow.dashboard.access")

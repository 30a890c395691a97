"""Access, sessions, reviewer identity and CSRF for the page.

* **Access** (reads): when a bearer token (:data:`dashboard.security.TOKEN_ENV`) or a
  reviewers file is configured, every request needs ``Authorization: Bearer <token>`` (the
  access token or a reviewer's own) or a session cookie. ``/auth?token=...`` trades a token
  for a session: the cookie holds a random session id, never the token, and is ``Secure``
  when the page is served over TLS. Sessions live in this process (a restart signs out).
* **Identity** (writes): a reviewer token (bearer or session) names its reviewer. The SSO
  header is read only when ``JUDGEFLOW_DASHBOARD_USER_HEADER`` names it and, when an access
  token is configured (always the case off loopback), only on requests that carry that
  token as a bearer: the proxy holds it, so a client that reaches the page around the proxy
  cannot claim a name.
* **CSRF** (writes): the ``Origin`` must be the page's own, and the ``X-CSRF-Token`` header
  must equal the ``judgeflow_csrf`` cookie (double submit; the page sets the cookie).
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.typedefs import Middleware

from dashboard.identity import match_token, valid_name

SESSION_COOKIE = "judgeflow_dashboard"
CSRF_COOKIE = "judgeflow_csrf"
CSRF_HEADER = "X-CSRF-Token"
REVIEWER = web.RequestKey("reviewer", str)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Session:
    reviewer: str | None
    last_seen: float


class Sessions:
    """Random session ids -> who; idle ones expire, the oldest go first beyond ``limit``."""

    def __init__(self, idle_seconds: float = 12 * 3600, limit: int = 10_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.idle_seconds, self.limit, self.clock = idle_seconds, limit, clock
        self._items: OrderedDict[str, Session] = OrderedDict()

    def create(self, reviewer: str | None) -> str:
        sid = secrets.token_urlsafe(32)
        self._items[sid] = Session(reviewer, self.clock())
        while len(self._items) > self.limit:
            self._items.popitem(last=False)
        return sid

    def get(self, sid: str) -> Session | None:
        session = self._items.get(sid)
        if session is None:
            return None
        now = self.clock()
        if now - session.last_seen > self.idle_seconds:
            del self._items[sid]
            return None
        session.last_seen = now
        self._items.move_to_end(sid)
        return session


@dataclass
class Access:
    """What the server was configured with (tokens are secrets: never logged)."""

    token: str | None = None
    reviewers: dict[str, str] = field(default_factory=dict)
    user_header: str | None = None
    sessions: Sessions = field(default_factory=Sessions)

    @property
    def closed(self) -> bool:
        return bool(self.token or self.reviewers)


def _bearer(request: web.Request) -> str | None:
    auth = request.headers.get("Authorization", "")
    return auth[len("Bearer "):].strip() if auth.startswith("Bearer ") else None


def _is_access_token(access: Access, given: str | None) -> bool:
    return bool(access.token and given
                and hmac.compare_digest(given.encode(), access.token.encode()))


def _login(request: web.Request, access: Access) -> web.StreamResponse:
    given = request.query.get("token", "")
    reviewer = match_token(access.reviewers, given) if given else None
    if reviewer is None and not _is_access_token(access, given):
        raise web.HTTPUnauthorized(text="wrong token\n")
    response = web.HTTPSeeOther("/")
    response.set_cookie(SESSION_COOKIE, access.sessions.create(reviewer), httponly=True,
                        samesite="Strict", secure=request.secure, path="/")
    return response


def identify(request: web.Request, access: Access) -> tuple[bool, str | None]:
    """(may read, reviewer name or None) for one request."""
    given = _bearer(request)
    proxy = _is_access_token(access, given)
    reviewer = match_token(access.reviewers, given) if given and not proxy else None
    allowed = proxy or reviewer is not None or not access.closed
    if given is None:
        session = access.sessions.get(request.cookies.get(SESSION_COOKIE, ""))
        if session is not None:
            allowed, reviewer = True, session.reviewer
    if reviewer is None and access.user_header and (proxy or not access.token):
        name = request.headers.get(access.user_header, "").strip()
        reviewer = name if valid_name(name) else None
    return allowed, reviewer


def auth_middleware(access: Access) -> Middleware:
    @web.middleware
    async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path == "/auth" and access.closed:
            return _login(request, access)
        allowed, reviewer = identify(request, access)
        if not allowed:
            raise web.HTTPUnauthorized(
                text="a bearer token is required (open /auth?token=... once)\n",
                headers={"WWW-Authenticate": "Bearer"})
        if reviewer is not None:
            request[REVIEWER] = reviewer
        return await handler(request)
    return check


def csrf_cookie(request: web.Request, response: web.StreamResponse) -> None:
    """Give the page its double-submit token (readable by the page's script)."""
    if len(request.cookies.get(CSRF_COOKIE, "")) < 32:
        response.set_cookie(CSRF_COOKIE, secrets.token_urlsafe(32), httponly=False,
                            samesite="Strict", secure=request.secure, path="/")


def write_refusal(request: web.Request) -> str | None:
    """Why a write is refused as cross-site (None: it is same-origin with a CSRF token)."""
    origin = request.headers.get("Origin")
    if not origin:
        return "a write needs the page's Origin header"
    parts = urlsplit(origin)
    if parts.netloc.lower() != request.host.lower() or parts.scheme not in (
            request.scheme, "https"):
        return "a write must come from the page's own origin"
    cookie = request.cookies.get(CSRF_COOKIE, "")
    header = request.headers.get(CSRF_HEADER, "")
    if len(cookie) < 16 or not hmac.compare_digest(cookie.encode(), header.encode()):
        return f"a write needs the {CSRF_HEADER} header equal to the {CSRF_COOKIE} cookie"
    return None

"""Writing the access audit trail (:mod:`schemas.audit`) from the page.

Serving patient text and recording who was shown it are one step: :func:`record` returns
only once the broker acknowledged the event (``acks=all``), and raises :class:`AuditFailed`
otherwise, upon which the handler answers 503 and the text is not sent. Without a trail
configured (``State.audit_trail`` None) nothing is served either: the page fails closed.

Who and which sign-in come from the request: the reviewer's pseudonym (never the name), and
a keyed hash of the session cookie or bearer token (never the credential). What was shown
is named by note id and span, never by its text.
"""

from __future__ import annotations

import hashlib
import hmac
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from aiohttp import web
from aiohttp.typedefs import Middleware

from dashboard.identity import pseudonym
from dashboard.sessions import REVIEWER, SESSION_COOKIE
from dashboard.state import STATE, State, json_response
from dashboard.writer import WriteFailed
from schemas.audit import Action, AuditEvent, NoteSpan

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
WITHHELD = ("the access audit trail did not acknowledge this view, so its patient text is "
            "not served; try again")


class AuditFailed(Exception):
    """The audit event was not acknowledged: the view it records must not be served."""


def _keyed(key: bytes, prefix: str, secret: str) -> str:
    return prefix + hmac.new(key, secret.encode(), hashlib.sha256).hexdigest()[:16]


def session_of(request: web.Request, key: bytes, cookie: str | None = None) -> str:
    """Which sign-in the request came from: a keyed hash of its bearer token or session."""
    auth = request.headers.get("Authorization", "")
    if auth.startswith("Bearer ") and auth[7:].strip():
        return _keyed(key, "tk-", auth[7:].strip())
    sid = cookie or request.cookies.get(SESSION_COOKIE, "")
    return _keyed(key, "ss-", sid) if sid else "none"


def route_of(request: web.Request) -> str:
    info = request.match_info.route.resource
    return f"{request.method} {info.canonical if info is not None else request.path}"


def note_spans(pointers: Any, extra_notes: Iterable[str] = ()) -> tuple[NoteSpan, ...]:
    """Every note a view shows, with the spans it highlights (from the judge's evidence
    pointers; ``extra_notes``: notes quoted without offsets, e.g. the agents' evidence)."""
    spans: dict[str, list[tuple[int, int]]] = {}
    for p in pointers if isinstance(pointers, list | tuple) else ():
        if isinstance(p, Mapping) and isinstance(p.get("note_id"), str):
            found = spans.setdefault(p["note_id"], [])
            off = p.get("offsets")
            if (isinstance(off, list | tuple) and len(off) == 2
                    and all(isinstance(v, int) and not isinstance(v, bool) for v in off)):
                found.append((off[0], off[1]))
    for note in extra_notes:
        spans.setdefault(note, [])
    out = []
    for note_id, found in spans.items():
        try:
            out.append(NoteSpan(note_id=note_id, spans=tuple(found)))
        except ValueError:
            continue  # an id that is no safe id names no note the page can show
    return tuple(out)


def event(request: web.Request, state: State, action: Action, *,
          patients: Iterable[str] = (), cookie: str | None = None,
          reviewer_name: str | None = None, **fields: Any) -> AuditEvent:
    name = reviewer_name if reviewer_name is not None else request.get(REVIEWER)
    return AuditEvent(
        audit_id=uuid.uuid4().hex, at=datetime.now(UTC), action=action,
        reviewer=pseudonym(state.reviewer_key, name) if name else None,
        session=session_of(request, state.reviewer_key, cookie), route=route_of(request),
        patient_ids=tuple(dict.fromkeys(p for p in patients if p)), **fields)


async def record(state: State, audit_event: AuditEvent) -> None:
    """Write ``audit_event`` and wait for the broker's acknowledgement (AuditFailed)."""
    if state.audit_trail is None:
        raise AuditFailed("no audit trail")
    try:
        await state.audit_trail.send_record(*audit_event.to_record())
    except WriteFailed:
        raise AuditFailed("not acknowledged") from None


def withheld(message: str = WITHHELD) -> web.Response:
    return json_response({"error": message}, 503)


NO_SESSION = ("the access audit trail did not acknowledge this sign-in, so no session is "
              "given; try again")


def sign_in_middleware() -> Middleware:
    """Records every sign-in at ``/auth`` (refused ones too). Placed before the auth
    middleware, it sees the answer: a session whose sign-in could not be recorded is
    never handed out (the cookie is not sent; the id expires unused)."""
    @web.middleware
    async def audited(request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path != "/auth":
            return await handler(request)
        state = request.app[STATE]
        if not state.access.closed:
            return await handler(request)
        try:
            response = await handler(request)
        except web.HTTPUnauthorized:
            try:
                await record(state, event(request, state, "sign_in_refused"))
            except AuditFailed:
                return withheld(NO_SESSION)
            raise
        morsel = response.cookies.get(SESSION_COOKIE)
        if morsel is None:
            if response.status == 401:  # refused with an answer rather than raised
                try:
                    await record(state, event(request, state, "sign_in_refused"))
                except AuditFailed:
                    return withheld(NO_SESSION)
            return response
        session = state.access.sessions.get(morsel.value)
        name = session.reviewer if session is not None else None
        try:
            await record(state, event(request, state, "sign_in", cookie=morsel.value,
                                      reviewer_name=name or ""))
        except AuditFailed:
            return withheld(NO_SESSION)
        return response
    return audited

"""The aiohttp application: a static page, a small JSON API over the window, and SSE.

The reviewer's routes (queue, cell, save) are in :mod:`dashboard.review_api`.

The page (``static/``) is plain files; every value from an event reaches the browser as
JSON and is rendered with ``textContent``, never parsed as HTML.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import asdict
from pathlib import Path

import orjson
from aiohttp import web

from dashboard.access_audit import sign_in_middleware
from dashboard.errors import json_errors
from dashboard.limits import MAX_BODY, request_started
from dashboard.probes import add_probe_routes, probe_middleware
from dashboard.queue import redact
from dashboard.review_api import add_routes, reviewer_of
from dashboard.rows import cell_of, debrief_cards
from dashboard.security import add_headers, host_middleware
from dashboard.sessions import auth_middleware, csrf_cookie
from dashboard.state import STATE, State, json_response
from dashboard.stats import calibration_rows, cost_by_version
from dashboard.window import CALIBRATION, EVALUATIONS, FILTERS, RESULTS

__all__ = ["State", "create_app"]
STATIC = Path(__file__).resolve().parent / "static"
#: The page's own files, fixed at start: nothing else is ever served from the folder.
STATIC_FILES = frozenset(p.name for p in STATIC.iterdir() if p.is_file() and not p.is_symlink())
MAX_ROWS = 500
KEEPALIVE_SECONDS = 15.0
_json = json_response


async def index(request: web.Request) -> web.StreamResponse:
    response = web.FileResponse(STATIC / "index.html")
    csrf_cookie(request, response)
    return response


async def static(request: web.Request) -> web.StreamResponse:
    """One of the page's own files; anything else is a 404 (JSON, like every error: a
    missing file under aiohttp's static route answered an empty octet-stream 404)."""
    name = request.match_info["name"]
    if name not in STATIC_FILES:
        raise web.HTTPNotFound()
    return web.FileResponse(STATIC / name)


async def no_icon(request: web.Request) -> web.Response:
    return web.Response(status=204)


async def rows(request: web.Request) -> web.Response:
    state = request.app[STATE]
    filters = {k: v for k, v in request.query.items() if k in FILTERS}
    reviewer = reviewer_of(request)
    shown = [redact(r, state.decisions, cell_of(r),
                    reviewer) for r in state.window.rows(filters, limit=MAX_ROWS)]
    return _json({"rows": shown,
                  "facets": state.window.facets(), "max_rows": MAX_ROWS})


CARD_FIELDS = ("evaluation_id", "request_id", "case_id", "global_rating", "domain_scores",
               "safety_breach", "dropped_criteria", "corrections", "narrative",
               "prompt_version", "evaluated_at")


async def debriefs(request: web.Request) -> web.Response:
    window = request.app[STATE].window
    cards = [{k: e.get(k) for k in CARD_FIELDS}
             for e in debrief_cards(window.values(EVALUATIONS))[:MAX_ROWS]]
    return _json({"cards": cards})


async def stats(request: web.Request) -> web.Response:
    window = request.app[STATE].window
    return _json({"cost": cost_by_version(window.values(RESULTS)),
                  "calibration": calibration_rows(window.values(CALIBRATION),
                                                  request.app[STATE].min_cells),
                  "min_cells": request.app[STATE].min_cells})


async def health(request: web.Request) -> web.Response:
    state = request.app[STATE]
    guard = state.guard
    return _json({"feed": asdict(state.feed), "window": len(state.window),
                  # pending cells' results held over --window (kept, never dropped)
                  "pending_beyond_window": state.window.pending_beyond_limit(),
                  "adjudications": len(state.decisions), "streams": len(state.hub.clients),
                  "connections": len(guard.conns) if guard else None,
                  "refused": guard.refused if guard else None})


async def events(request: web.Request) -> web.StreamResponse:
    """Server-sent events: ``result`` carries the new row; others say "re-read"."""
    state = request.app[STATE]
    hub = state.hub
    if len(hub.clients) >= state.limits.max_streams:
        return _json({"error": "too many live pages open"}, 503)
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                           "X-Accel-Buffering": "no"})
    queue = hub.subscribe()  # counted before the first await: the cap holds under a burst
    try:
        await response.prepare(request)
        await response.write(b"retry: 1000\n: connected\n\n")
        while True:
            try:
                item = await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
            except TimeoutError:
                await response.write(b": keep-alive\n\n")
                continue
            if item is None:
                break
            name, data = item
            await response.write(b"event: " + name.encode() + b"\ndata: "
                                 + orjson.dumps(data) + b"\n\n")
    except (ConnectionResetError, ConnectionError):
        pass  # the page went away
    finally:
        hub.unsubscribe(queue)
        with contextlib.suppress(Exception):
            await response.write_eof()
    return response


def create_app(state: State) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY, middlewares=[
        json_errors,  # outermost: every error below it answers {"error": ...}
        probe_middleware(), host_middleware(state.allowed_hosts),
        request_started(lambda r: state.guard), sign_in_middleware(),
        auth_middleware(state.access)])
    app[STATE] = state
    app.on_response_prepare.append(add_headers)
    app.router.add_get("/", index)
    app.router.add_get("/auth", index)  # answered by the auth middleware
    app.router.add_get("/static/{name}", static)
    app.router.add_get("/favicon.ico", no_icon)
    app.router.add_get("/api/rows", rows)
    add_routes(app)
    app.router.add_get("/api/debriefs", debriefs)
    app.router.add_get("/api/stats", stats)
    app.router.add_get("/api/health", health)
    app.router.add_get("/events", events)
    add_probe_routes(app)
    return app

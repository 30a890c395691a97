"""The aiohttp application: a static page, a small JSON API over the window, and SSE.

The page (``static/``) is plain files; every value from an event reaches the browser as
JSON and is rendered with ``textContent``, never parsed as HTML.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web

from agents.context.charts import ChartStore
from dashboard.excerpt import evidence_excerpts
from dashboard.feed import FeedStatus, Hub
from dashboard.security import add_headers, auth_middleware
from dashboard.stats import calibration_rows, cost_by_version
from dashboard.window import (
    CALIBRATION,
    EVALUATIONS,
    FILTERS,
    RESULTS,
    Window,
    correctness,
    debrief_cards,
)

STATIC = Path(__file__).resolve().parent / "static"
MAX_ROWS = 500
KEEPALIVE_SECONDS = 15.0


@dataclass
class State:
    window: Window
    charts: ChartStore
    hub: Hub
    feed: FeedStatus


STATE = web.AppKey("state", State)


def _json(data: Any, status: int = 200) -> web.Response:
    return web.Response(body=orjson.dumps(data), status=status,
                        content_type="application/json")


async def index(request: web.Request) -> web.StreamResponse:
    return web.FileResponse(STATIC / "index.html")


async def no_icon(request: web.Request) -> web.Response:
    return web.Response(status=204)


async def rows(request: web.Request) -> web.Response:
    state = request.app[STATE]
    filters = {k: v for k, v in request.query.items() if k in FILTERS}
    return _json({"rows": state.window.rows(filters, limit=MAX_ROWS),
                  "facets": state.window.facets(), "max_rows": MAX_ROWS})


async def cell(request: web.Request) -> web.Response:
    state = request.app[STATE]
    result = state.window.get(RESULTS, request.match_info["rid"])
    if result is None:
        return _json({"error": "not in the window"}, status=404)
    raw = result.get("analysis")
    analysis: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return _json({
        "row": state.window.row(request.match_info["rid"]),
        "reasoning": analysis.get("reasoning"),
        "agent_correctness": correctness(result),
        "evidence": evidence_excerpts(state.charts, result.get("patient_id", ""),
                                      analysis.get("evidence_pointers")),
        "validation": result.get("validation") or [],
        "provider": result.get("provider"), "model": result.get("model"),
        "usage": result.get("usage"), "latency_ms": result.get("latency_ms"),
    })


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
                  "calibration": calibration_rows(window.values(CALIBRATION))})


async def health(request: web.Request) -> web.Response:
    state = request.app[STATE]
    return _json({"feed": asdict(state.feed), "window": len(state.window)})


async def events(request: web.Request) -> web.StreamResponse:
    """Server-sent events: ``result`` carries the new row; others say "re-read"."""
    hub = request.app[STATE].hub
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                           "X-Accel-Buffering": "no"})
    await response.prepare(request)
    queue = hub.subscribe()
    try:
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
    except ConnectionResetError:
        pass
    finally:
        hub.unsubscribe(queue)
        with contextlib.suppress(Exception):
            await response.write_eof()
    return response


def create_app(state: State, token: str | None) -> web.Application:
    app = web.Application(middlewares=[auth_middleware(token)])
    app[STATE] = state
    app.on_response_prepare.append(add_headers)
    app.router.add_get("/", index)
    app.router.add_get("/auth", index)  # answered by the auth middleware
    app.router.add_static("/static/", STATIC, show_index=False, follow_symlinks=False)
    app.router.add_get("/favicon.ico", no_icon)
    app.router.add_get("/api/rows", rows)
    app.router.add_get("/api/cell/{rid}", cell)
    app.router.add_get("/api/debriefs", debriefs)
    app.router.add_get("/api/stats", stats)
    app.router.add_get("/api/health", health)
    app.router.add_get("/events", events)
    return app

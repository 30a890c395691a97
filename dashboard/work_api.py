"""Sharing the review work: who holds a cell (``POST /api/claim``) and the progress per
reviewer and per criterion (``GET /api/progress``); documented in docs/api.md."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import orjson
from aiohttp import web

from dashboard.identity import pseudonym
from dashboard.progress import progress
from dashboard.rows import cell_of
from dashboard.sessions import REVIEWER, write_refusal
from dashboard.state import STATE, json_response
from dashboard.window import RESULTS


def reviewer_of(request: web.Request) -> str | None:
    """The requesting reviewer's pseudonym (None: no reviewer identity)."""
    name = request.get(REVIEWER)
    return pseudonym(request.app[STATE].reviewer_key, name) if name else None


async def read_json_body(request: web.Request, reviewer: str | None,
                         unidentified: str) -> Any:
    """A write's JSON body, or the response refusing it: cross-site (403) before anything
    else, then without a reviewer (401, ``unidentified``), a body too slow (408) or not
    JSON (400). The caller tells the two apart with ``isinstance(..., web.Response)``."""
    refusal = write_refusal(request)
    if refusal is not None:
        return json_response({"error": refusal}, 403)
    if reviewer is None:
        return json_response({"error": unidentified}, 401)
    try:
        async with asyncio.timeout(request.app[STATE].limits.body_timeout):
            body = await request.read()
        return orjson.loads(body)
    except TimeoutError:
        return json_response({"error": "the request body was too slow"}, 408)
    except orjson.JSONDecodeError:
        return json_response({"error": "the body must be JSON"}, 400)


async def claim(request: web.Request) -> web.Response:
    """Hold a cell while reviewing it (``{"result_id": ...}``): 200 with the claim, 409 when
    other reviewers hold every open review slot of the cell."""
    state = request.app[STATE]
    reviewer = reviewer_of(request)
    body = await read_json_body(request, reviewer, "claiming needs an identified reviewer")
    if isinstance(body, web.Response):
        return body
    assert reviewer is not None  # read_json_body answered 401 otherwise
    rid = body.get("result_id") if isinstance(body, dict) else None
    result = state.window.get(RESULTS, rid) if isinstance(rid, str) else None
    if result is None:
        return json_response({"error": "no such judge result in the window"}, 404)
    key = cell_of(result)
    if not state.claims.claim(key, reviewer, state.decisions.claim_slots(key),
                              time.monotonic()):
        return json_response({"error": "other reviewers hold this cell"}, 409)
    return json_response({"cell": key, "reviewer": reviewer,
                          "expires_in": state.claims.seconds})


async def progress_view(request: web.Request) -> web.Response:
    state = request.app[STATE]
    return json_response(progress(state.window, state.decisions, state.claims,
                                  time.monotonic()))


def add_work_routes(app: web.Application) -> None:
    app.router.add_post("/api/claim", claim)
    app.router.add_get("/api/progress", progress_view)

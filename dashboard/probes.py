"""Kubernetes probes: ``GET /livez`` and ``GET /readyz``, answered before the Host check and
the sign-in (a kubelet sends the pod's IP as ``Host`` and holds no token).

They say nothing about the data: ``/livez`` is 200 while the server answers; ``/readyz``
is 200 once the feed follows its partitions (the window is being filled) and 503 before, so
a Service sends no reviewer to a page that cannot show the queue yet. Both bodies are one
fixed word; no id, count or topic name leaves through them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web
from aiohttp.typedefs import Middleware

from dashboard.state import STATE

LIVE, READY = "/livez", "/readyz"
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def live(request: web.Request) -> web.Response:
    return web.Response(text="ok\n")


async def ready(request: web.Request) -> web.Response:
    up = request.app[STATE].feed.assigned > 0
    return web.Response(text="ready\n" if up else "starting\n", status=200 if up else 503)


PROBES: dict[str, Handler] = {LIVE: live, READY: ready}


def probe_middleware() -> Middleware:
    """The outermost middleware: a probe is answered here, past the Host and token checks
    (its routes are registered too, so the router and docs/api.md know them)."""
    @web.middleware
    async def probe(request: web.Request, handler: Handler) -> web.StreamResponse:
        answer = PROBES.get(request.path) if request.method == "GET" else None
        return await (answer or handler)(request)
    return probe


def add_probe_routes(app: web.Application) -> None:
    for path, handler in PROBES.items():
        app.router.add_get(path, handler)

"""docs/api.md documents exactly the routes the page server registers, no more, no fewer."""

from __future__ import annotations

import re
from pathlib import Path

from agents.context.charts import ChartStore
from dashboard.feed import FeedStatus, Hub
from dashboard.web import State, create_app
from dashboard.window import Window

API_DOC = Path(__file__).resolve().parents[3] / "docs" / "api.md"
#: a route in a heading: `GET /api/cell/{result_id}`, `GET /static/…`
ROUTE = re.compile(r"`(GET|POST|PUT|PATCH|DELETE) (/[^`\s]*)`")


def _shape(path: str) -> str:
    """Parameter names and the static folder's file part do not matter, only the shape."""
    path = re.sub(r"\{[^}]*\}", "{}", path.split("?")[0])
    return re.sub(r"/(…|\.\.\.|<file>)$", "", path).rstrip("/") or "/"


def registered(tmp_path: Path) -> set[tuple[str, str]]:
    app = create_app(State(Window(10), ChartStore(tmp_path), Hub(), FeedStatus()))
    routes = set()
    for route in app.router.routes():
        if route.method == "HEAD":  # aiohttp adds one beside every GET
            continue
        info = route.resource.get_info() if route.resource else {}
        path = info.get("path") or info.get("formatter") or info.get("prefix")
        assert path, f"a route with no path: {route}"
        routes.add((route.method, _shape(path)))
    return routes


def documented() -> set[tuple[str, str]]:
    headings = [line for line in API_DOC.read_text().splitlines() if line.startswith("#")]
    return {(m, _shape(p)) for line in headings for m, p in ROUTE.findall(line)}


def test_every_registered_route_is_documented_and_only_those(tmp_path: Path) -> None:
    served, written = registered(tmp_path), documented()
    assert served - written == set(), "served but not documented in docs/api.md"
    assert written - served == set(), "documented in docs/api.md but not served"


def test_the_check_sees_the_routes_issue_18_named(tmp_path: Path) -> None:
    served = registered(tmp_path)
    assert {("GET", "/api/rows"), ("GET", "/api/debriefs"), ("GET", "/api/health"),
            ("GET", "/api/queue"), ("GET", "/api/cell/{}"), ("POST", "/api/adjudications"),
            ("GET", "/static")} <= served

"""docs/api.md documents exactly the routes the page server registers, no more, no fewer,
and the adjudication id formula the code uses."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agents.context.charts import ChartStore
from dashboard.decisions import decide, parse_save
from dashboard.feed import FeedStatus, Hub
from dashboard.web import State, create_app
from dashboard.window import Window
from schemas.skill import AnswerSchema

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
            ("GET", "/static/{}")} <= served


def documented_id(cell: str, result_id: str, adjudicator: str, final: Any, klass: str,
                  comment: str | None, supersedes: str | None) -> str:
    """docs/api.md's formula, written out from the page (not from the code)."""
    content = json.dumps([final, klass, comment], sort_keys=True, separators=(",", ":"))
    parts = ["adjudication", cell, result_id, adjudicator, content, supersedes or ""]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


@pytest.mark.parametrize(("body", "klass"), [
    ({"classification": "agent_error", "error_agent": "third"}, "agent_error:third"),
    ({"classification": "agent_error", "error_agent": "skeptical"}, "agent_b_error"),
    ({"classification": "agent_a_error"}, "agent_a_error"),
    ({"classification": "n_a", "comment": "unclear note"}, "n_a"),
])
def test_the_documented_adjudication_id_is_the_one_the_code_writes(
        body: dict[str, Any], klass: str) -> None:
    doc = API_DOC.read_text()
    assert '`"agent_error:" + error_agent`' in doc  # the by-id rule is on the page
    agents = ("default", "skeptical", "third")
    result = {"result_id": "r1", "task_id": "t", "patient_id": "p", "field_id": "f",
              "analysis": {"suggested_answer": "type_2"}}
    schema = AnswerSchema(type="enum", enum=("type_1", "type_2"))
    req = parse_save({"result_id": "r1", "final_answer": "type_1", **body})
    adj, _ = decide(req, result, schema, ["type_2", "type_1", "type_1"], None, "rv-1",
                    datetime(2026, 12, 1, tzinfo=UTC), agents)
    assert adj.adjudication_id == documented_id(
        "t|p|f", "r1", "rv-1", "type_1", klass, body.get("comment"), None)

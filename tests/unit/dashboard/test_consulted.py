"""The review page shows what the judge searched and read: ids, spans, patterns and hit
counts from the result's ``consulted``, never note text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from agents.context.charts import ChartStore
from dashboard.consulted import MAX_ROWS, consulted_view
from dashboard.feed import FeedStatus, Hub
from dashboard.web import State, create_app
from dashboard.window import RESULTS, Window
from tests.unit.dashboard.audit_sink import RecordedAudit

CONSULTED = [
    {"tool": "search_notes", "pattern": "jardiance|empagliflozin", "hits": 2},
    {"tool": "search_notes", "note_id": "n05", "start": 40, "end": 260},
    {"tool": "search_notes", "note_id": "n07", "start": 0, "end": 120},
    {"tool": "read_note", "note_id": "n05", "start": 0, "end": 460},
    {"tool": "list_notes"},
]


@pytest.mark.parametrize(("raw", "want"), [
    (CONSULTED, [
        {"tool": "search_notes", "pattern": "jardiance|empagliflozin", "hits": 2,
         "windows": [{"note_id": "n05", "span": [40, 260]},
                     {"note_id": "n07", "span": [0, 120]}]},
        {"tool": "read_note", "note_id": "n05", "span": [0, 460]},
        {"tool": "list_notes"}]),
    (None, []),
    ("junk", []),
    ([{"tool": "read_note", "note_id": 5}, {"tool": "rm"}, 3], []),
    ([{"tool": "read_note", "note_id": "n1", "start": "0", "end": 4}],
     [{"tool": "read_note", "note_id": "n1", "span": None}]),
    ([{"tool": "list_notes"}] * (MAX_ROWS + 5), [{"tool": "list_notes"}] * MAX_ROWS),
])
def test_consulted_view(raw: Any, want: list[dict[str, Any]]) -> None:
    assert consulted_view(raw) == want


async def test_the_cell_api_lists_what_the_judge_read(tmp_path: Path) -> None:
    notes = tmp_path / "p"
    notes.mkdir()
    secret = "Started Jardiance 10 mg daily."
    (notes / "n05.txt").write_text(secret)
    state = State(Window(10), ChartStore(tmp_path), Hub(), FeedStatus(),
                  audit_trail=RecordedAudit())
    state.window.add(RESULTS, {"result_id": "r1", "job_id": "j1", "task_id": "t",
                               "patient_id": "p", "field_id": "f", "kind": "disagreement",
                               "status": "ok", "analysis": {"suggested_answer": "yes"},
                               "consulted": CONSULTED})
    client: TestClient = TestClient(TestServer(create_app(state)))  # type: ignore[type-arg]
    await client.start_server()
    try:
        data = await (await client.get("/api/cell/r1")).json()
    finally:
        await client.close()
    assert data["consulted"] == consulted_view(CONSULTED)
    assert "Jardiance 10 mg" not in str(data["consulted"])

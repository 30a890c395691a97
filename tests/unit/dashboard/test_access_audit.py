"""The access audit from the page, with the trail's broker replaced by a list (the real
broker: tests/integration/test_audit_trail.py): a cell view records the reviewer's
pseudonym, the patient and the notes and spans shown, never the text; a view, a decision
or a sign-in whose event is refused is not served."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from aiohttp.test_utils import TestClient, TestServer

from agents.context.charts import ChartStore
from dashboard.feed import FeedStatus, Hub
from dashboard.identity import hash_token, pseudonym
from dashboard.sessions import CSRF_COOKIE, Access
from dashboard.web import State, create_app
from dashboard.window import JOBS, RESULTS, Window
from schemas.audit import AuditEvent
from schemas.skill import AnswerSchema, Criterion
from tests.unit.dashboard.audit_sink import RecordedAudit

KEY = b"k" * 32
ALICE = "alice-token-0123456789abcdef"
NOTE = "PHI-MARKER-7731 Jane Roe, HbA1c 9.1% on insulin since 2019."


def make_state(tmp_path: Path, fail: bool = False) -> State:
    (tmp_path / "P033").mkdir(exist_ok=True)
    (tmp_path / "P033" / "n-1.txt").write_text(NOTE)
    s = State(Window(10), ChartStore(tmp_path), Hub(), FeedStatus(), reviewer_key=KEY,
              access=Access(reviewers={hash_token(ALICE): "alice"}),
              audit_trail=RecordedAudit(fail=fail))
    s.window.add(RESULTS, {"result_id": "r1", "job_id": "j1", "task_id": "t",
                           "patient_id": "P033", "field_id": "f", "kind": "disagreement",
                           "status": "ok", "analysis": {
                               "reasoning": "insulin", "evidence_pointers": [
                                   {"note_id": "n-1", "offsets": [16, 24]}]}})
    s.criteria["f"] = Criterion(field_id="f", prompt="Which?", answer_schema=AnswerSchema(
        type="enum", enum=("yes", "no")))
    s.window.add(JOBS, {"job_id": "j1", "answers": [{"agent_id": "default", "answer": "yes",
                                                     "evidence": [{"note_id": "n-2",
                                                                   "quote": "Jane Roe"}]}]})
    return s


async def client(state: State) -> TestClient:  # type: ignore[type-arg]
    c: TestClient = TestClient(TestServer(create_app(state)))  # type: ignore[type-arg]
    await c.start_server()
    return c


def events(state: State) -> list[dict[str, Any]]:
    assert isinstance(state.audit_trail, RecordedAudit)
    return state.audit_trail.events


async def test_a_cell_view_records_who_saw_which_notes_and_spans_never_the_text(
        tmp_path: Path) -> None:
    state = make_state(tmp_path)
    c = await client(state)
    try:
        resp = await c.get("/api/cell/r1", headers={"Authorization": f"Bearer {ALICE}"})
        assert resp.status == 200 and "PHI-MARKER-7731" in await resp.text()
    finally:
        await c.close()
    (event,) = events(state)
    AuditEvent.model_validate({k: v for k, v in event.items() if k != "key"})
    assert event["action"] == "view_cell" and event["patient_ids"] == ["P033"]
    assert event["reviewer"] == pseudonym(KEY, "alice") and event["key"] == "P033"
    assert event["notes"] == [{"note_id": "n-1", "spans": [[16, 24]]},
                              {"note_id": "n-2", "spans": []}]
    assert event["session"].startswith("tk-") and event["route"] == "GET /api/cell/{rid}"
    raw = orjson.dumps(event).decode()
    for secret in ("PHI-MARKER", "Jane Roe", "insulin", ALICE, "alice\""):
        assert secret not in raw, secret


async def test_a_view_whose_event_is_not_acknowledged_is_not_served(tmp_path: Path) -> None:
    state = make_state(tmp_path, fail=True)
    c = await client(state)
    try:
        resp = await c.get("/api/cell/r1", headers={"Authorization": f"Bearer {ALICE}"})
        body = await resp.text()
        assert resp.status == 503 and "audit trail" in orjson.loads(body)["error"]
        assert "PHI-MARKER" not in body and "Jane" not in body
        signed = await c.get("/auth", params={"token": ALICE}, allow_redirects=False)
        assert signed.status == 503 and "judgeflow_dashboard" not in signed.cookies
        c.session.cookie_jar.update_cookies({CSRF_COOKIE: "c" * 43})
        saved = await c.post("/api/adjudications", json={
            "result_id": "r1", "final_answer": "no", "classification": "agent_a_error"},
            headers={"Origin": str(c.make_url("")).rstrip("/"), "X-CSRF-Token": "c" * 43,
                     "Authorization": f"Bearer {ALICE}"})
        assert saved.status == 503 and len(state.decisions) == 0
    finally:
        await c.close()


async def test_sign_ins_are_recorded_refused_ones_too(tmp_path: Path) -> None:
    state = make_state(tmp_path)
    c = await client(state)
    try:
        ok = await c.get("/auth", params={"token": ALICE}, allow_redirects=False)
        assert ok.status == 303
        bad = await c.get("/auth", params={"token": "wrong-" + ALICE}, allow_redirects=False)
        assert bad.status == 401
        assert (await c.get("/api/cell/r1")).status == 200  # with the session cookie
    finally:
        await c.close()
    sign_in, refused, view = events(state)
    assert (sign_in["action"], refused["action"], view["action"]) == (
        "sign_in", "sign_in_refused", "view_cell")
    assert sign_in["reviewer"] == view["reviewer"] == pseudonym(KEY, "alice")
    assert sign_in["session"] == view["session"] and sign_in["session"].startswith("ss-")
    assert "reviewer" not in refused and "wrong-" not in orjson.dumps(refused).decode()

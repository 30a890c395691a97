"""``GET /api/queue`` and ``POST /api/adjudications`` without a broker: who may write (SSO
header, reviewer tokens), CSRF refusals, the answer check, and a broker that is down."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient, TestServer

from agents.context.charts import ChartStore
from dashboard.feed import FeedStatus, Hub
from dashboard.identity import hash_token, pseudonym
from dashboard.limits import MAX_BODY
from dashboard.sessions import CSRF_COOKIE, Access
from dashboard.web import State, create_app
from dashboard.window import JOBS, RESULTS, Window
from dashboard.writer import Writer
from schemas.skill import AnswerSchema, Criterion
from tests.unit.dashboard.audit_sink import RecordedAudit

PROXY = "proxy-token-0123456789abcdef"
ALICE = "alice-token-0123456789abcdef"
KEY = b"k" * 32
CSRF = "c" * 43


def make_state(tmp_path: Path, access: Access) -> State:
    s = State(Window(10), ChartStore(tmp_path), Hub(), FeedStatus(), access=access,
              reviewer_key=KEY, audit_trail=RecordedAudit())
    s.criteria["f"] = Criterion(field_id="f", prompt="Which?", answer_schema=AnswerSchema(
        type="enum", enum=("yes", "no")))
    s.window.add(RESULTS, {"result_id": "r1", "job_id": "j1", "task_id": "t",
                           "patient_id": "p", "field_id": "f", "kind": "disagreement",
                           "status": "ok", "analysis": {"suggested_answer": "yes"}})
    s.window.add(JOBS, {"job_id": "j1", "answers": [{"agent_id": "default", "answer": "yes"}]})
    s.writer = Writer("127.0.0.1:1", "adjudications", timeout=1.0)  # nothing listens there
    return s


@pytest.fixture()
async def make(tmp_path: Path) -> AsyncIterator[Any]:
    made: list[tuple[TestClient, State]] = []  # type: ignore[type-arg]

    async def client(access: Access) -> tuple[TestClient, State]:  # type: ignore[type-arg]
        state = make_state(tmp_path, access)
        c: TestClient = TestClient(TestServer(create_app(state)))  # type: ignore[type-arg]
        await c.start_server()
        made.append((c, state))
        return c, state
    yield client
    for c, state in made:
        if state.writer is not None:
            await state.writer.close()
        await c.close()


def same_origin(c: Any, **extra: str) -> dict[str, str]:
    c.session.cookie_jar.update_cookies({CSRF_COOKIE: CSRF})
    return {"Origin": str(c.make_url("")).rstrip("/"), "X-CSRF-Token": CSRF, **extra}


BODY = {"result_id": "r1", "final_answer": "no", "classification": "agent_a_error"}


async def test_the_queue_lists_pending_items_with_the_documented_fields(make: Any) -> None:
    c, _ = await make(Access())
    data = await (await c.get("/api/queue")).json()
    item = data["items"][0]
    for name in ("result_id", "task_id", "patient_id", "field_id", "kind", "status",
                 "suggested_answer", "state", "cell", "rank"):
        assert name in item, name
    assert (data["total"], item["state"]) == (1, "pending")
    assert (await c.get("/api/queue?state=nonsense")).status == 400
    index = await c.get("/")
    assert CSRF_COOKIE in index.cookies and not index.cookies[CSRF_COOKIE]["httponly"]


async def test_a_three_agent_cell_names_its_reviewers_by_id(make: Any) -> None:
    """The detail names every agent; the classifications read with the first two's ids
    (the contract blames only those), never the positional tokens."""
    c, state = await make(Access())
    state.window.add(RESULTS, {"result_id": "r3", "job_id": "j3", "task_id": "t",
                               "patient_id": "p3", "field_id": "f", "kind": "disagreement",
                               "status": "ok", "agents": ["default", "skeptical", "third"],
                               "correct_agents": ["skeptical", "third"],
                               "analysis": {"suggested_answer": "no",
                                            "agent_correctness": "agent_b",
                                            "classification_hint": "agent_a_error"}})
    state.window.add(JOBS, {"job_id": "j3", "answers": [
        {"agent_id": a, "answer": v} for a, v in (("default", "yes"), ("skeptical", "no"),
                                                   ("third", "no"))]})
    data = await (await c.get("/api/cell/r3")).json()
    assert [a["agent_id"] for a in data["answers"]] == ["default", "skeptical", "third"]
    assert data["row"]["agents"] == ["default", "skeptical", "third"]
    assert data["agent_correctness"] == "skeptical+third"
    labels = {x["value"]: x["label"] for x in data["classifications"]}
    assert labels["agent_a_error"] == "error of default"
    assert labels["agent_b_error"] == "error of skeptical"
    assert data["row"]["classification_hint"] == "agent_a_error"  # the token to post back
    assert not any("agent_" in x["label"] for x in data["classifications"])


@pytest.mark.parametrize(("headers", "status", "says"), [
    ({}, 403, "Origin"),
    ({"Origin": "http://evil.example"}, 403, "own origin"),
    ({"Origin": "null"}, 403, "own origin"),
    ({"X-CSRF-Token": ""}, 403, "X-CSRF-Token"),
    ({"X-CSRF-Token": "d" * 43}, 403, "X-CSRF-Token"),
])
async def test_cross_site_writes_are_refused(make: Any, headers: dict[str, str], status: int,
                                             says: str) -> None:
    c, state = await make(Access(user_header="X-User"))
    sent = {**same_origin(c, **{"X-User": "alice"}), **headers}
    if not headers:
        del sent["Origin"]
    resp = await c.post("/api/adjudications", json=BODY, headers=sent)
    assert resp.status == status and says in (await resp.json())["error"]
    assert len(state.decisions) == 0


async def test_the_sso_header_counts_only_when_configured(make: Any) -> None:
    c, _ = await make(Access())  # no JUDGEFLOW_DASHBOARD_USER_HEADER: the header is ignored
    resp = await c.post("/api/adjudications", json=BODY,
                        headers=same_origin(c, **{"X-User": "alice"}))
    assert resp.status == 401
    assert (await (await c.get("/api/me", headers={"X-User": "alice"})).json())[
        "reviewer"] is None


async def test_with_a_proxy_token_the_header_needs_the_token_too(make: Any) -> None:
    c, _ = await make(Access(token=PROXY, user_header="X-User"))
    me = await c.get("/api/me", headers={"X-User": "alice"})
    assert me.status == 401  # no token at all: no access
    alice = {"X-User": "alice", "Authorization": f"Bearer {PROXY}"}
    me_json = await (await c.get("/api/me", headers=alice)).json()
    assert me_json["reviewer"] == pseudonym(KEY, "alice")
    # a session made with the access token does not make the header trusted
    await c.get(f"/auth?token={PROXY}", allow_redirects=False)
    resp = await c.get("/api/me", headers={"X-User": "mallory"})
    assert resp.status == 200 and (await resp.json())["reviewer"] is None


async def test_a_reviewer_token_names_its_reviewer_and_a_down_broker_is_a_503(
        make: Any) -> None:
    c, state = await make(Access(reviewers={hash_token(ALICE): "alice"}))
    assert (await c.get("/api/queue")).status == 401
    assert (await c.get("/auth?token=nope", allow_redirects=False)).status == 401
    assert (await c.get(f"/auth?token={ALICE}", allow_redirects=False)).status == 303
    me = await (await c.get("/api/me")).json()
    assert me["reviewer"] == pseudonym(KEY, "alice") and me["name"] == "alice"
    bad = await c.post("/api/adjudications", json={**BODY, "final_answer": "maybe"},
                       headers=same_origin(c))
    assert bad.status == 400 and "allowed: yes, no" in (await bad.json())["error"]
    gone = await c.post("/api/adjudications", json={**BODY, "result_id": "r404"},
                        headers=same_origin(c))
    assert gone.status == 404
    down = await c.post("/api/adjudications", json=BODY, headers=same_origin(c))
    assert down.status == 503 and "not saved" in (await down.json())["error"]
    assert len(state.decisions) == 0 and state.writer is not None and state.writer.failed == 1
    bearer = await c.post("/api/adjudications", json={**BODY, "final_answer": "maybe"},
                          headers=same_origin(c, Authorization=f"Bearer {ALICE}"))
    assert bearer.status == 400  # a tool with the reviewer's token passes identity too


async def test_a_body_over_the_cap_is_refused_before_it_is_read(make: Any) -> None:
    c, state = await make(Access(reviewers={hash_token(ALICE): "alice"}))
    assert (await c.get(f"/auth?token={ALICE}", allow_redirects=False)).status == 303
    comment = "x" * MAX_BODY  # a valid adjudication, its comment alone at the cap
    big = await c.post("/api/adjudications", json={**BODY, "comment": comment},
                       headers=same_origin(c))
    assert big.status == 413 and len(state.decisions) == 0
    fits = await c.post("/api/adjudications", json={**BODY, "final_answer": "maybe"},
                        headers=same_origin(c))
    assert fits.status == 400  # under the cap the body is read (and checked)

"""The reviewer's API: the work queue, a cell's whole case, and saving a decision.

``GET /api/queue``, ``GET /api/cell/{rid}``, ``GET /api/me``, ``POST /api/adjudications``,
``POST /api/claim``, ``GET /api/progress`` (documented in docs/api.md). A blind cell's judge
answer is in no response for a reviewer before their own decision is saved
(:mod:`dashboard.decided`). A save is refused as cross-site (403) before anything else is
read, then without a reviewer (401); it answers 201 only after the broker acknowledged the
adjudication, and 503 (nothing saved, the page keeps the form) when it did not.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from dashboard import access_audit
from dashboard.consulted import consulted_view
from dashboard.decided import held_by_others
from dashboard.decisions import DecisionError, decide, parse_save
from dashboard.excerpt import cited_notes, evidence_excerpts
from dashboard.identity import pseudonym
from dashboard.queue import MAX_ITEMS, STATES, items, queue_row
from dashboard.rows import cell_of, correctness, reviewer_ids
from dashboard.sessions import CSRF_HEADER, REVIEWER
from dashboard.state import STATE, State, json_response
from dashboard.window import FILTERS, JOBS, RESULTS
from dashboard.work_api import add_work_routes, read_json_body, reviewer_of
from dashboard.writer import WriteFailed
from schemas.calibration import Adjudication
from schemas.reviewer_labels import classification_choices


async def queue(request: web.Request) -> web.Response:
    state = request.app[STATE]
    wanted = request.query.get("state", "pending")
    if wanted not in STATES:
        return json_response({"error": f"state must be one of {', '.join(STATES)}"}, 400)
    filters = {k: v for k, v in request.query.items() if k in FILTERS}
    rows, total = items(state.window, state.decisions, filters, wanted, MAX_ITEMS,
                        reviewer_of(request), state.claims, time.monotonic())
    return json_response({"items": rows, "total": total, "max_items": MAX_ITEMS,
                          "facets": state.window.facets()})


async def cell(request: web.Request) -> web.Response:
    state = request.app[STATE]
    rid = request.match_info["rid"]
    result = state.window.get(RESULTS, rid)
    if result is None:
        return json_response({"error": "not in the window"}, status=404)
    raw = result.get("analysis")
    analysis: dict[str, Any] = raw if isinstance(raw, dict) else {}
    job = state.window.get(JOBS, str(result.get("job_id", ""))) or {}
    key, patient = cell_of(result), str(result.get("patient_id", ""))
    reviewer, decisions = reviewer_of(request), state.decisions
    row = queue_row(state.window, decisions, key, state.window.seq(RESULTS, rid), result,
                    reviewer)
    answers = job.get("answers") or []
    sees = not row["blind"]  # queue_row: blind = not sees_judge(key, reviewer)
    # blind: the notes the agents quoted, not the judge's pointers (they hint at its answer)
    pointers = analysis.get("evidence_pointers") if sees else [
        {"note_id": q.get("note_id")} for a in answers for q in a.get("quotes") or ()]
    quoted = [str(q.get("note_id")) for a in job.get("answers") or () if isinstance(a, dict)
              for q in a.get("quotes") or () if isinstance(q, dict) and q.get("note_id")]
    try:  # recorded (acknowledged) before any of the patient's text leaves
        await access_audit.record(state, access_audit.event(
            request, state, "view_cell", patients=[patient], result_id=rid,
            notes=access_audit.note_spans(pointers, quoted)))
    except access_audit.AuditFailed:
        return access_audit.withheld()
    return json_response({
        "row": row,
        "criterion": state.criterion_view(str(result.get("field_id", ""))),
        "answers": answers,
        "reasoning": analysis.get("reasoning") if sees else None,
        # reviewers by agent id: who was right, the classifications' labels
        "agent_correctness": correctness(result, job) if sees else None,
        "classifications": classification_choices(row["agents"]),
        "evidence": evidence_excerpts(state.charts, patient, pointers) if sees else [],
        "notes": cited_notes(state.charts, patient, pointers),
        "validation": (result.get("validation") or []) if sees else [],
        # what the judge searched and read with its chart tools (ids and spans only);
        # part of the judge's answer, so hidden on a blind cell like the rest of it
        "consulted": consulted_view(result.get("consulted")) if sees else [],
        "decisions": decisions.visible(key, reviewer),
        # queue_row computed the plan's mode and slots
        "review": {"mode": row["review_mode"], "reviews": row["reviews"],
                   "judge_hidden": row["blind"],
                   "slot": decisions.next_slot(key, reviewer) if reviewer else None,
                   "held_by_others": held_by_others(decisions, state.claims, key, reviewer,
                                                    time.monotonic())},
        "provider": result.get("provider"), "model": result.get("model"),
        "usage": result.get("usage"), "latency_ms": result.get("latency_ms"),
    })


async def me(request: web.Request) -> web.Response:
    state = request.app[STATE]
    name = request.get(REVIEWER)
    return json_response({"reviewer": pseudonym(state.reviewer_key, name) if name else None,
                          "name": name, "csrf_header": CSRF_HEADER})


async def save(request: web.Request) -> web.Response:
    state = request.app[STATE]
    name = request.get(REVIEWER)
    body = await read_json_body(request, name, "saving needs an identified reviewer (a "
                                "reviewer token or the SSO proxy's user header)")
    if isinstance(body, web.Response):
        return body
    assert name is not None  # read_json_body answered 401 otherwise
    try:
        req = parse_save(body)
    except DecisionError as exc:
        return json_response({"error": str(exc)}, exc.status)
    result = state.window.get(RESULTS, req.result_id)
    if result is None:
        return json_response({"error": "no such judge result in the window"}, 404)
    key = cell_of(result)
    reviewer = pseudonym(state.reviewer_key, name)
    async with state.cell_lock(key):  # a double click waits, then finds its own save
        decisions = state.decisions
        # a reviewer's correction of their own decision needs no claim
        if held_by_others(decisions, state.claims, key, reviewer, time.monotonic()):
            return json_response({"error": "another reviewer holds this cell; it is "
                                  "theirs until their claim expires"}, 409)
        slot = decisions.next_slot(key, reviewer)
        blind = not decisions.sees_judge(key, reviewer)  # sees_judge: any verify cell
        job = state.window.get(JOBS, str(result.get("job_id", ""))) or {}
        try:
            adjudication, retry = decide(
                req, result, state.answer_schema(str(result.get("field_id", ""))),
                job.get("normalized"), decisions.latest(key, slot), reviewer,
                datetime.now(UTC), reviewer_ids(result, job),
                review_mode="blind" if blind else "verify", review_slot=slot)
        except DecisionError as exc:
            return json_response({"error": str(exc)}, exc.status)
        if not retry:
            try:  # the trail first: a decision that cannot be recorded is not saved
                await asyncio.shield(access_audit.record(state, access_audit.event(
                    request, state, "decision", patients=[str(result.get("patient_id", ""))],
                    result_id=req.result_id, adjudication_id=adjudication.adjudication_id)))
            except access_audit.AuditFailed:
                return json_response({"error": "the access audit trail did not acknowledge "
                                      "the decision: it is not saved; try again"}, 503)
            try:  # shielded: a reviewer who closes the tab mid-save still gets it recorded
                await asyncio.shield(_write(state, adjudication))
            except WriteFailed:
                return json_response({"error": "the broker did not acknowledge the decision: "
                                      "it is not saved; try again"}, 503)
        state.claims.release(key, reviewer)
    return json_response({"adjudication_id": adjudication.adjudication_id,
                          "supersedes": adjudication.supersedes, "adjudicator": reviewer,
                          "decision": adjudication.decision, "retry": retry,
                          "review_mode": adjudication.review_mode,
                          "review_slot": adjudication.review_slot}, 201)


async def _write(state: State, adjudication: Adjudication) -> None:
    if state.writer is None:
        raise WriteFailed("no writer")
    await state.writer.send(adjudication)
    state.record(adjudication.model_dump(mode="json"))


def add_routes(app: web.Application) -> None:
    app.router.add_get("/api/queue", queue)
    app.router.add_get("/api/cell/{rid}", cell)
    app.router.add_get("/api/me", me)
    app.router.add_post("/api/adjudications", save)
    add_work_routes(app)

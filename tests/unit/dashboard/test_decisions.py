"""The decision core: parsing a save, checking the answer with detect's normaliser, the
deterministic id, retries, supersedes; the queue's order; reviewer identity."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from dashboard.decided import Decisions
from dashboard.decisions import DecisionError, decide, parse_save
from dashboard.identity import (
    add_reviewer,
    match_token,
    parse_reviewers,
    pseudonym,
    read_reviewers,
    reviewer_key,
)
from dashboard.queue import items
from dashboard.window import JOBS, RESULTS, Window
from schemas.calibration import Adjudication
from schemas.skill import AnswerSchema

ENUM = AnswerSchema(type="enum", enum=("type_1", "type_2", "no_info"))
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
RESULT = {"result_id": "r1", "task_id": "t", "patient_id": "p", "field_id": "f",
          "analysis": {"suggested_answer": "type_2"}}


def save(**kw: Any) -> Any:
    return parse_save({"result_id": "r1", "final_answer": "type_1",
                       "classification": "agent_a_error", **kw})


@pytest.mark.parametrize(("body", "status", "says"), [
    ([], 400, "JSON object"),
    ({"result_id": "r1", "final_answer": 1, "classification": "n_a", "x": 1}, 400, "unknown"),
    ({"final_answer": 1, "classification": "n_a"}, 400, "result_id"),
    # issue 25: an id the adjudication contract refuses is a 400, not a failed save
    ({"result_id": "r1\n\x1b[2K", "final_answer": 1, "classification": "n_a"}, 400,
     "result_id"),
    ({"result_id": "../r1", "final_answer": 1, "classification": "n_a"}, 400, "result_id"),
    ({"result_id": "r1", "classification": "n_a"}, 400, "final_answer"),
    ({"result_id": "r1", "final_answer": 1, "classification": "agent_c_error"}, 400,
     "classification"),
    ({"result_id": "r1", "final_answer": 1, "classification": "n_a", "comment": 5}, 400,
     "comment"),
    ({"result_id": "r1", "final_answer": 1, "classification": "n_a", "comment": "x" * 2001},
     400, "longer"),
])
def test_a_malformed_save_is_refused_with_a_reason(body: Any, status: int, says: str) -> None:
    with pytest.raises(DecisionError) as err:
        parse_save(body)
    assert err.value.status == status and says in str(err.value)


@pytest.mark.parametrize(("schema", "raw", "canon"), [
    (ENUM, "Type_1", "type_1"), (ENUM, "unknown", "no_info"),
    (AnswerSchema(type="number", unit="%"), "7.2 %", 7.2),
    (AnswerSchema(type="date"), "03/04/2024", "2024-03-04"),
    (AnswerSchema(type="list", enum=("a", "b")), "b, a", ["a", "b"]),
    (AnswerSchema(type="boolean", enum=(True, False, "no_info")), "yes", True),
])
def test_the_final_answer_is_canonicalised_like_detect_does(schema: AnswerSchema, raw: Any,
                                                            canon: Any) -> None:
    adj, retry = decide(save(final_answer=raw), RESULT, schema, None, None, "rv-1", NOW)
    assert adj.final_answer == canon and not retry


@pytest.mark.parametrize(("schema", "raw"), [
    (ENUM, "type_9"), (AnswerSchema(type="number", unit="%"), "seven"),
    (AnswerSchema(type="date"), "yesterday"), (AnswerSchema(type="list", enum=("a",)), "c"),
    (AnswerSchema(type="enum", enum=("x",), allows_no_info=False), None)])
def test_an_answer_outside_the_schema_is_a_400(schema: AnswerSchema, raw: Any) -> None:
    with pytest.raises(DecisionError) as err:
        decide(save(final_answer=raw), RESULT, schema, None, None, "rv-1", NOW)
    assert err.value.status == 400


def test_an_unknown_criterion_cannot_be_checked() -> None:
    with pytest.raises(DecisionError) as err:
        decide(save(), RESULT, None, None, None, "rv-1", NOW)
    assert err.value.status == 409


def test_a_retry_is_the_same_decision_and_a_change_supersedes() -> None:
    first, retry = decide(save(), RESULT, ENUM, ["type_2", "type_1"], None, "rv-1", NOW)
    assert not retry and first.decision == "overridden" and first.agent_correctness == "agent_b"
    assert first.key == "t|p|f" and first.suggested_answer == "type_2"
    latest = first.model_dump(mode="json")
    again, retry = decide(save(final_answer="TYPE_1"), RESULT, ENUM, None, latest, "rv-1",
                          NOW.replace(hour=10))
    assert retry and again.adjudication_id == first.adjudication_id
    other, retry = decide(save(final_answer="type_2"), RESULT, ENUM, ["type_2", "type_1"],
                          latest, "rv-2", NOW)
    assert not retry and other.supersedes == first.adjudication_id
    assert other.decision == "accepted" and other.adjudication_id != first.adjudication_id
    same, _ = decide(save(final_answer="type_2"), RESULT, ENUM, None, latest, "rv-2", NOW)
    assert same.adjudication_id == other.adjudication_id  # deterministic, not time-based
    Adjudication.model_validate(other.model_dump(mode="json"))


def test_decisions_keep_one_copy_per_id_latest_last() -> None:
    d = Decisions()
    a = {"task_id": "t", "patient_id": "p", "field_id": "f", "adjudication_id": "a",
         "adjudicated_at": "2026-12-01T10:00:00Z"}
    b = {**a, "adjudication_id": "b", "adjudicated_at": "2026-12-01T09:00:00+00:00"}
    assert d.add(a) == "t|p|f" and d.add(a) is None and d.add(b) == "t|p|f"
    assert d.latest("t|p|f") == a and [x["adjudication_id"] for x in d.history("t|p|f")] == [
        "a", "b"]
    plain = {"task_id": "t", "patient_id": "q", "field_id": "f"}  # another tool's, no id
    assert d.add(plain) == "t|q|f" and d.add(dict(plain)) is None
    assert d.add({"task_id": "t"}) is None and d.add("x") is None and len(d) == 3


def result(rid: str, patient: str, status: str, kind: str, judged: str) -> dict[str, Any]:
    return {"result_id": rid, "job_id": f"j{rid}", "task_id": "t", "patient_id": patient,
            "field_id": "f", "status": status, "kind": kind, "judged_at": judged}


def test_the_queue_orders_bands_then_oldest_and_drops_decided_cells() -> None:
    w, d = Window(), Decisions()
    for r in (result("drift", "p1", "ok", "type_drift", "2026-01-01T00:00:00Z"),
              result("low", "p2", "ok", "low_confidence", "2026-01-01T00:00:00Z"),
              result("dis-new", "p3", "ok", "disagreement", "2026-01-03T00:00:00Z"),
              result("dis-old", "p4", "ok", "disagreement", "2026-01-02T00:00:00Z"),
              result("flag", "p5", "flagged", "type_drift", "2026-01-05T00:00:00Z"),
              result("fall", "p6", "fallback", "disagreement", "2026-01-04T00:00:00Z"),
              result("old-v", "p7", "ok", "disagreement", "2026-01-01T00:00:00Z"),
              result("new-v", "p7", "ok", "type_drift", "2026-01-01T00:00:00Z")):
        w.add(RESULTS, r)
    w.add(JOBS, {"job_id": "jlow", "answers": [{"agent_id": "default", "answer": "x",
                                                "rationale": "why"}]})
    rows, total = items(w, d)
    assert [r["result_id"] for r in rows] == ["fall", "flag", "dis-old", "dis-new", "low",
                                              "drift", "new-v"]  # one item per cell
    assert total == 7 and rows[4]["answers"] == [
        {"agent_id": "default", "answer": "x", "confidence": None}]
    d.add({"task_id": "t", "patient_id": "p6", "field_id": "f", "adjudication_id": "x",
           "adjudicator": "rv-1"})
    rows, _ = items(w, d)
    assert rows[0]["result_id"] == "flag"
    done, n = items(w, d, state="decided")
    assert n == 1 and done[0]["state"] == "decided" and done[0]["decided_by"] == "rv-1"
    assert [r["result_id"] for r in items(w, d, {"kind": "type_drift"})[0]] == [
        "flag", "drift", "new-v"]


def test_reviewers_file_and_pseudonyms(tmp_path: Path) -> None:
    path = tmp_path / "reviewers"
    token = add_reviewer(path, "alice")
    assert token not in path.read_text() and (path.stat().st_mode & 0o777) == 0o600
    reviewers = read_reviewers(path)
    assert match_token(reviewers, token) == "alice" and match_token(reviewers, "x") is None
    with pytest.raises(ValueError, match="already"):
        add_reviewer(path, "alice")
    with pytest.raises(ValueError, match="line 2") as err:
        parse_reviewers("# ok\nbob secret-token-in-clear\n")
    assert "secret-token" not in str(err.value)
    key = reviewer_key(None, tmp_path / "state")
    assert key == reviewer_key(None, tmp_path / "state")  # made once, kept
    rid = pseudonym(key, "Alice ")
    assert rid == pseudonym(key, "alice") and rid.startswith("rv-") and "alice" not in rid
    assert pseudonym(b"another key 0123456789", "alice") != rid
    with pytest.raises(ValueError):
        reviewer_key("short", tmp_path)


THREE = ("default", "skeptical", "third")


@pytest.mark.parametrize(("body", "stored"), [
    ({"classification": "agent_error", "error_agent": "third"}, ("agent_error", "third")),
    ({"classification": "agent_error", "error_agent": "skeptical"},
     ("agent_b_error", "skeptical")),  # the first two keep their positional tokens
    ({"classification": "agent_a_error"}, ("agent_a_error", "default")),
    # what GET /api/queue says of the hint, posted back as it is
    ({"classification": "agent_b_error", "error_agent": "skeptical"},
     ("agent_b_error", "skeptical")),
])
def test_any_agent_of_the_cell_can_be_blamed_by_id(body: dict[str, Any],
                                                   stored: tuple[str, str]) -> None:
    req = parse_save({"result_id": "r1", "final_answer": "type_1", **body})
    adj, retry = decide(req, RESULT, ENUM, ["type_2", "type_1", "type_1"], None, "rv-1", NOW,
                        THREE)
    assert not retry and (adj.classification, adj.error_agent) == stored
    assert adj.correct_agents == ("skeptical", "third") and adj.agent_correctness == "agent_b"


def test_blaming_an_agent_the_cell_does_not_have_is_refused() -> None:
    req = parse_save({"result_id": "r1", "final_answer": "type_1",
                      "classification": "agent_error", "error_agent": "nobody"})
    with pytest.raises(DecisionError) as err:
        decide(req, RESULT, ENUM, ["type_2", "type_1"], None, "rv-1", NOW, THREE[:2])
    assert err.value.status == 400 and "error_agent" in str(err.value)

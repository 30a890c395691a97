"""A reviewer's save -> one ``Adjudication`` (decisions so far: :mod:`dashboard.decided`).
Pure (no Kafka, no clock: ``now`` is passed in).

The adjudication id is derived from what was decided and what it replaces:
``derive_id("adjudication", cell, result_id, adjudicator, canonical_json([final answer,
classification, comment]), supersedes)``. A save identical to the cell's latest decision by
the same reviewer is a retry: it gets that decision's id back and writes nothing, so a double
click or a resent request never makes a second event; and a resend of a save whose
acknowledgement was lost carries the same id, so consumers can drop the copy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from schemas.base import MAX_ID_CHARS, is_record_id
from schemas.calibration import AGENT_ERROR, CLASSIFICATIONS, MAX_COMMENT_CHARS, Adjudication
from schemas.chart_review import cell_key
from schemas.ids import canonical_json, derive_id
from schemas.reviewer_labels import resolve
from schemas.skill import AnswerSchema
from streams.detect.normalize import Invalid, canonicalize, to_json_value

FIELDS = {"result_id", "final_answer", "classification", "error_agent", "comment"}
#: What ``classification`` may be: the positional tokens and ``agent_error`` (with
#: ``error_agent`` naming any agent of the cell by id).
ACCEPTED = (*CLASSIFICATIONS, AGENT_ERROR)


class DecisionError(ValueError):
    """A save the server refuses; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class SaveRequest:
    result_id: str
    final_answer: Any
    classification: str
    comment: str | None
    error_agent: str | None = None


def parse_save(body: Any) -> SaveRequest:
    if not isinstance(body, dict):
        raise DecisionError(400, "the body must be a JSON object")
    unknown = sorted(set(body) - FIELDS)
    if unknown:
        raise DecisionError(400, f"unknown field(s): {', '.join(unknown)[:200]}")
    rid, cls, comment = body.get("result_id"), body.get("classification"), body.get("comment")
    if not isinstance(rid, str) or not 0 < len(rid) <= MAX_ID_CHARS or not is_record_id(rid):
        raise DecisionError(400, "result_id must be the judge result's id")
    if "final_answer" not in body:
        raise DecisionError(400, "final_answer is required")
    if cls not in ACCEPTED:
        raise DecisionError(400, f"classification must be one of {', '.join(ACCEPTED)}")
    who = body.get("error_agent")
    if who is not None and (not isinstance(who, str) or not 0 < len(who) <= 200):
        raise DecisionError(400, "error_agent must be an agent's id")
    if comment is not None and not isinstance(comment, str):
        raise DecisionError(400, "comment must be a string")
    comment = (comment or "").strip() or None
    if comment is not None and len(comment) > MAX_COMMENT_CHARS:
        raise DecisionError(400, f"comment is longer than {MAX_COMMENT_CHARS} characters")
    return SaveRequest(rid, body["final_answer"], str(cls), comment, who)


def check_answer(raw: Any, schema: AnswerSchema | None, field_id: str) -> Any:
    """The canonical final answer, by the normaliser detect uses; 400 when it does not fit."""
    if schema is None:
        raise DecisionError(409, f"criterion {field_id} is not in the skill: its answer "
                            "schema is unknown, so no answer can be checked")
    canon = canonicalize(raw, schema)
    if isinstance(canon, Invalid):
        allowed = f" (allowed: {', '.join(map(str, schema.enum))})" if schema.enum else ""
        raise DecisionError(400, f"final_answer does not fit the criterion: {canon.reason}"
                            f"{allowed}")
    return to_json_value(canon)


def adjudication_id(cell: str, result_id: str, adjudicator: str, final_answer: Any,
                    classification: str, comment: str | None, supersedes: str | None) -> str:
    content = canonical_json([final_answer, classification, comment])
    return derive_id("adjudication", cell, result_id, adjudicator, content, supersedes or "")


def correctness(final: Any, normalized: Sequence[Any]) -> str | None:
    """Which of the first two agents gave the final answer (agent A first), in the
    positional tokens; None with fewer than two (``correct_agents`` names every agent)."""
    if len(normalized) < 2:
        return None
    a, b = (canonical_json(v) == canonical_json(final) for v in normalized[:2])
    return {(True, True): "both", (True, False): "agent_a", (False, True): "agent_b"}.get(
        (a, b), "neither")


def correct_agents(final: Any, agents: Sequence[str], normalized: Sequence[Any]
                   ) -> tuple[str, ...] | None:
    """Every agent whose canonical answer is the final answer, by id; None when the
    answers are unknown."""
    if not agents or len(agents) != len(normalized):
        return None
    return tuple(a for a, v in zip(agents, normalized, strict=True)
                 if canonical_json(v) == canonical_json(final))


def decide(req: SaveRequest, result: Mapping[str, Any], schema: AnswerSchema | None,
           normalized: Sequence[Any] | None, latest: Mapping[str, Any] | None,
           adjudicator: str, now: datetime, agents: Sequence[str] = (),
           review_mode: str | None = None, review_slot: int | None = None
           ) -> tuple[Adjudication, bool]:
    """The adjudication to write, and whether it is a retry of ``latest`` (write nothing).
    ``agents``: the cell's agent ids in the job's order (who ``error_agent`` may name).
    ``latest``: the latest decision of the slot this one goes to (``review_slot``; a
    second reviewer's decision supersedes only the second slot's); ``review_mode``: how the
    reviewer saw the cell (``blind``: without the judge's answer)."""
    task, patient, field = (str(result.get(k, "")) for k in ("task_id", "patient_id",
                                                              "field_id"))
    final = check_answer(req.final_answer, schema, field)
    try:
        klass, blamed = resolve(req.classification, req.error_agent, agents)
    except ValueError as exc:
        raise DecisionError(400, str(exc)) from None
    if latest is not None and latest.get("adjudicator") == adjudicator and (
            latest.get("result_id"), canonical_json(latest.get("final_answer")),
            latest.get("classification"), latest.get("error_agent"),
            latest.get("comment")) == (
            req.result_id, canonical_json(final), klass, blamed, req.comment):
        return Adjudication.model_validate(latest), True
    raw = result.get("analysis")
    suggested = raw.get("suggested_answer") if isinstance(raw, dict) else None
    canon_suggested = (to_json_value(canonicalize(suggested, schema))
                       if schema is not None else suggested)
    cell = cell_key(task, patient, field)
    supersedes = str(latest["adjudication_id"]) if latest and latest.get(
        "adjudication_id") else None
    return Adjudication(
        cell=cell, task_id=task, patient_id=patient, field_id=field, final_answer=final,
        classification=klass,  # type: ignore[arg-type]
        agent_correctness=correctness(final, normalized or ()),  # type: ignore[arg-type]
        error_agent=blamed, correct_agents=correct_agents(final, agents, normalized or ()),
        adjudicator=adjudicator, adjudicated_at=now,
        adjudication_id=adjudication_id(cell, req.result_id, adjudicator, final,
                                        klass if blamed is None or klass != AGENT_ERROR
                                        else f"{klass}:{blamed}", req.comment, supersedes),
        result_id=req.result_id, suggested_answer=suggested,
        decision="accepted" if canonical_json(canon_suggested) == canonical_json(final)
        else "overridden",
        comment=req.comment, supersedes=supersedes,
        review_mode=review_mode, review_slot=review_slot), False  # type: ignore[arg-type]

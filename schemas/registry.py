"""Which model validates which topic, and how its records are keyed.

Keys are the contract: chart-review topics are keyed by the cell key so all events of a cell
meet in one partition; medkit topics by ``request_id``. This module sits on top of the other
schema modules and imports them; they never import it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from schemas.audit import AuditEvent
from schemas.calibration import Adjudication, CalibrationRecord
from schemas.chart_review import AgentAnswer, CellOutcome, JudgeJob, JudgeResult
from schemas.medkit import CaseEvaluation, DebriefRequest


@dataclass(frozen=True)
class TopicContract:
    model: type[BaseModel]
    key: Callable[[Any], str]


def _cell(rec: Any) -> str:
    return str(rec.key)


def _request(rec: Any) -> str:
    return str(rec.request_id)


#: Keyed by the attribute name in ``streams.settings.TopicSettings``.
CONTRACTS: dict[str, TopicContract] = {
    "agent_answers": TopicContract(AgentAnswer, _cell),
    "judge_jobs": TopicContract(JudgeJob, _cell),
    "cell_outcomes": TopicContract(CellOutcome, _cell),
    "judge_results": TopicContract(JudgeResult, _cell),
    "debrief_requests": TopicContract(DebriefRequest, _request),
    "case_evaluations": TopicContract(CaseEvaluation, _request),
    "adjudications": TopicContract(Adjudication, _cell),
    "calibration": TopicContract(CalibrationRecord, _cell),
}


def json_models() -> dict[str, type[BaseModel]]:
    """Every model whose JSON Schema is checked in under ``schemas/json``."""
    models: dict[str, type[BaseModel]] = {c.model.__name__: c.model for c in CONTRACTS.values()}
    models["AuditEvent"] = AuditEvent  # written by the page only: not a `produce` topic
    return dict(sorted(models.items()))


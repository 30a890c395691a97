"""Event and result models: the single source of truth for every judgeflow contract.

JSON Schemas in ``schemas/json/`` are generated from these models (``judgeflow schemas
generate``); ``tests/contract`` fails when the checked-in files drift.
"""

from schemas.base import Frozen, SchemaError
from schemas.chart_review import (
    AgentAnswer,
    CellOutcome,
    Evidence,
    JudgeAnalysis,
    JudgeJob,
    JudgeResult,
    SourceRef,
)
from schemas.medkit import CaseEvaluation, DebriefRequest

__all__ = [
    "AgentAnswer",
    "CaseEvaluation",
    "CellOutcome",
    "DebriefRequest",
    "Evidence",
    "Frozen",
    "JudgeAnalysis",
    "JudgeJob",
    "JudgeResult",
    "SchemaError",
    "SourceRef",
]

"""Which model validates which topic, and how its records are keyed.

Keys are the contract: chart-review topics are keyed by the cell key so all events of a cell
meet in one partition; medkit topics by ``request_id``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from schemas.chart_review import AgentAnswer, CellOutcome, JudgeJob, JudgeResult


@dataclass(frozen=True)
class TopicContract:
    model: type[BaseModel]
    key: Callable[[Any], str]


def _cell(rec: Any) -> str:
    return str(rec.key)


#: Keyed by the attribute name in ``streams.settings.TopicSettings``.
CONTRACTS: dict[str, TopicContract] = {
    "agent_answers": TopicContract(AgentAnswer, _cell),
    "judge_jobs": TopicContract(JudgeJob, _cell),
    "cell_outcomes": TopicContract(CellOutcome, _cell),
    "judge_results": TopicContract(JudgeResult, _cell),
}


def register(attr: str, model: type[BaseModel], key: Callable[[Any], str]) -> None:
    """Other packages (medkit, calibration) add their topic contracts here."""
    CONTRACTS[attr] = TopicContract(model, key)


def json_models() -> dict[str, type[BaseModel]]:
    """Every model whose JSON Schema is checked in under ``schemas/json``."""
    models: dict[str, type[BaseModel]] = {c.model.__name__: c.model for c in CONTRACTS.values()}
    return dict(sorted(models.items()))


#: Modules that add contracts when imported (they call :func:`register`). Imported here, last,
#: so that every user of ``CONTRACTS`` (produce, tail, replay) sees them however it was
#: started (a console script does not run ``schemas/__init__``'s imports first).
PLUGIN_MODULES = ("schemas.medkit", "schemas.calibration")
for _plugin in PLUGIN_MODULES:
    importlib.import_module(_plugin)

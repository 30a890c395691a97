"""Job and outcome records built as plain JSON objects, field for field what
``JudgeJob.model_dump(mode="json")`` and ``CellOutcome.model_dump(mode="json")`` give (same
keys, same order, same values), without building the models. The differential tests
compare both byte for byte; ``tests/contract`` validates the records against the models.
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from schemas.ids import derive_id
from streams.detect.decide import Decision
from streams.detect.fastpath import iso_json

Source = tuple[str, int, int]


@lru_cache(maxsize=16)
def stamp(now: float) -> str:
    """A batch stamps its records with one ``now``: formatted once."""
    return iso_json(datetime.fromtimestamp(now, UTC))


def _ids(d: Decision) -> tuple[str, str, str]:
    a0 = d.answers[0].answer
    return a0.task_id, a0.patient_id, a0.field_id


def job_record(d: Decision, job_id: str, source: Source, now: float) -> dict[str, Any]:
    task_id, patient_id, field_id = _ids(d)
    return {
        "job_id": job_id, "kind": d.job_kind, "task_id": task_id, "patient_id": patient_id,
        "field_id": field_id,
        "answers": [n.answer.model_dump(mode="json") for n in d.answers],
        "normalized": [n.json_value for n in d.answers],
        "reasons": list(d.reasons), "detected_at": stamp(now),
        "source": {"topic": source[0], "partition": source[1], "offset": source[2]},
        "missing_agents": list(d.missing_agents), "kinds_applicable": list(d.kinds_applicable),
    }


def outcome_record(d: Decision, job_id: str | None, now: float,
                   by_timeout: bool) -> dict[str, Any]:
    task_id, patient_id, field_id = _ids(d)
    return {
        "outcome_id": derive_id("outcome", d.inputs_id), "outcome": d.outcome,
        "task_id": task_id, "patient_id": patient_id, "field_id": field_id,
        "agents": [n.answer.agent_id for n in d.answers],
        "missing_agents": list(d.missing_agents), "job_id": job_id, "job_kind": d.job_kind,
        "reasons": list(d.reasons), "decided_at": stamp(now),
        "settled_by_timeout": by_timeout, "agreed_answer": d.agreed_answer,
    }


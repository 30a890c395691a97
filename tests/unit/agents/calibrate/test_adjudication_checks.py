"""Adjudications the calibrate worker refuses: an unknown criterion (when a skill is loaded)
or a task no decided cell names; bounded ids in every record (table-driven)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from agents.calibrate.feed import check_adjudication
from schemas.base import MAX_ID_CHARS
from schemas.calibration import Adjudication
from schemas.chart_review import CellOutcome, JudgeJob
from streams.errors import BadRecord
from tests.unit.agents.judge.fixtures import disagreement

ADJ = {"task_id": "t2dm-ckd-v1", "patient_id": "P001", "field_id": "ckd_stage",
       "final_answer": "G4", "classification": "agent_b_error", "adjudicator": "rev-1",
       "adjudicated_at": "2024-05-07T09:00:00Z"}
CRITERIA = {"ckd_stage", "egfr"}
TASKS = {"t2dm-ckd-v1"}


@pytest.mark.parametrize(("change", "criteria", "tasks", "error"), [
    ({}, CRITERIA, TASKS, None),
    ({"field_id": "ckd_stagee"}, CRITERIA, TASKS, "unknown_criterion"),
    ({"field_id": "ckd_stagee"}, None, TASKS, None),  # no skill: criteria not checked
    ({"task_id": "t2dm-ckd-v2"}, CRITERIA, TASKS, "unknown_task"),
    ({"task_id": "t2dm-ckd-v2"}, CRITERIA, set(), "unknown_task"),
    ({}, CRITERIA, set(), "unknown_task"),
])
def test_unknown_criteria_and_tasks_are_refused(change: dict[str, Any], criteria: set[str] | None,
                                                tasks: set[str], error: str | None) -> None:
    a = Adjudication.model_validate({**ADJ, **change})
    if error is None:
        check_adjudication(a, criteria, tasks)
        return
    with pytest.raises(BadRecord) as caught:
        check_adjudication(a, criteria, tasks)
    assert caught.value.error_type == error
    # the message names the field, never the value the reviewer typed
    assert change.get("field_id", "§") not in caught.value.message
    assert change.get("task_id", "§") not in caught.value.message


def _job(**change: Any) -> dict[str, Any]:
    return {**disagreement(job_id="job-1").model_dump(mode="json"), **change}


def _outcome(**change: Any) -> dict[str, Any]:
    return {"outcome_id": "o1", "outcome": "agreement", "task_id": "t", "patient_id": "p",
            "field_id": "f", "agents": ["a"], "decided_at": "2024-05-07T09:00:00Z", **change}


LONG = "x" * (MAX_ID_CHARS + 1)


@pytest.mark.parametrize(("model", "data", "field"), [
    (JudgeJob, _job(job_id=LONG), "job_id"),
    (JudgeJob, _job(job_id="x" * 100_000), "job_id"),
    (JudgeJob, _job(job_id=""), "job_id"),
    (CellOutcome, _outcome(outcome_id=LONG), "outcome_id"),
    (CellOutcome, _outcome(job_id=LONG), "job_id"),
])
def test_every_id_is_bounded(model: Any, data: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as caught:
        model.model_validate(data)
    assert [e["loc"][0] for e in caught.value.errors()] == [field]


@pytest.mark.parametrize(("model", "data"), [
    (JudgeJob, _job(job_id="x" * MAX_ID_CHARS)), (CellOutcome, _outcome(job_id="j" * 200))])
def test_ids_up_to_the_bound_are_accepted(model: Any, data: dict[str, Any]) -> None:
    model.model_validate(data)

"""Judge jobs are validated as strictly as answers; times must carry an offset (RFC 3339)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import ValidationError

from schemas.chart_review import MAX_JSON_DEPTH, AgentAnswer, JudgeJob
from schemas.skill import Skill
from streams.errors import BadRecord
from tests.unit.streams.test_processor import Cell, raw
from tests.unit.streams.test_processor import skill as skill  # the fixture

AWARE = "2026-01-01T00:00:00Z"


def answer(**over: Any) -> dict[str, Any]:
    rec = {"event_id": "e1", "run_id": "r1", "task_id": "t", "patient_id": "P1",
           "field_id": "f", "agent_id": "default", "answer": True, "emitted_at": AWARE}
    return {**rec, **over}


def job(**over: Any) -> dict[str, Any]:
    rec = {"job_id": "j", "kind": "disagreement", "task_id": "t", "patient_id": "P1",
           "field_id": "f", "answers": [answer(), answer(agent_id="skeptical", event_id="e2",
                                                        answer=False)],
           "normalized": [True, False], "reasons": ["differ"], "detected_at": AWARE}
    return {**rec, **over}


def nested(depth: int) -> Any:
    value: Any = "x"
    for _ in range(depth):  # ``depth`` levels of lists
        value = [value]
    return value


def test_a_valid_job_passes() -> None:
    assert JudgeJob.model_validate(job()).answers[1].agent_id == "skeptical"


@pytest.mark.parametrize(("over", "where"), [
    ({"normalized": [float("nan"), False]}, "NaN"),
    ({"normalized": [{"v": [float("inf")]}, False]}, "NaN"),
    ({"answers": [answer(answer=float("-inf")), answer(event_id="e2")]}, "NaN"),
    ({"answers": [answer(patient_id="P2"), answer(event_id="e2")]}, "another cell"),
    ({"answers": [answer(), answer(event_id="e2", field_id="g")]}, "another cell"),
    ({"answers": [answer(task_id="other"), answer(event_id="e2")]}, "another cell"),
    ({"normalized": [True]}, "one value per answer"),
    ({"normalized": [nested(MAX_JSON_DEPTH + 1), False]}, "nested deeper"),
    ({"detected_at": "2026-01-01T00:00:00"}, "UTC offset"),
])
def test_strict_job(over: dict[str, Any], where: str) -> None:
    with pytest.raises(ValidationError) as exc:
        JudgeJob.model_validate(job(**over))
    assert where in str(exc.value)


def test_nan_in_job_json_is_rejected() -> None:
    text = orjson.dumps(job()).replace(b"[true,false]", b"[NaN,Infinity]")
    assert b"NaN" in text
    with pytest.raises(ValidationError):
        JudgeJob.model_validate_json(text)


def test_nesting_limit_is_inclusive() -> None:
    assert AgentAnswer.model_validate(answer(answer=nested(MAX_JSON_DEPTH)))
    with pytest.raises(ValidationError, match="nested deeper"):
        AgentAnswer.model_validate(answer(answer=nested(MAX_JSON_DEPTH + 1)))


@pytest.mark.parametrize("at", ["2026-01-01T00:00:00", "2026-01-01 00:00:00.5"])
def test_naive_emitted_at_is_a_schema_error(at: str) -> None:
    with pytest.raises(ValidationError, match="UTC offset"):
        AgentAnswer.model_validate(answer(emitted_at=at))


@pytest.mark.parametrize("at", ["2026-01-01T00:00:00Z", "2026-01-01T01:00:00+01:00"])
def test_aware_emitted_at_passes(at: str) -> None:
    assert AgentAnswer.model_validate(answer(emitted_at=at)).emitted_at.utcoffset() is not None


def test_naive_after_aware_is_dead_lettered_not_raised(skill: Skill) -> None:
    cell = Cell(skill)
    cell.answer(raw("default", True, event="a1", at=AWARE))
    before = cell.state
    with pytest.raises(BadRecord) as exc:
        cell.answer(raw("default", False, event="a2", run="r2", at="2026-01-02T00:00:00"))
    assert exc.value.error_type == "schema_error" and "emitted_at" in exc.value.message
    assert cell.state == before
    cell.answer(raw("skeptical", True, event="b1", at=AWARE))  # the cell still decides
    assert [o["outcome"] for k, o in cell.emitted if k == "outcome"] == ["agreement"]


def test_aware_after_naive_is_accepted(skill: Skill, tmp_path: Path) -> None:
    cell = Cell(skill)
    with pytest.raises(BadRecord) as exc:
        cell.answer(raw("default", False, event="a0", at="2026-01-01T00:00:00"))
    assert exc.value.error_type == "schema_error" and cell.state is None
    cell.answer(raw("default", True, event="a1", at="2026-01-02T00:00:00+02:00"))
    cell.answer(raw("skeptical", True, event="b1", at=AWARE))
    assert [o["outcome"] for k, o in cell.emitted if k == "outcome"] == ["agreement"]

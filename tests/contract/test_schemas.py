"""Contracts other teams rely on: field names, topic names, generated JSON Schemas."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime

import pytest
from pydantic import BaseModel

from schemas.chart_review import AgentAnswer, CellOutcome, JudgeAnalysis, JudgeJob, JudgeResult
from schemas.dlq import DeadLetterHeaders, dead_letter_headers
from schemas.generate import JSON_DIR, check, render_all
from streams.settings import TopicSettings

#: Field names as DESIGN.md defines them: these may be extended, never renamed.
DESIGN_FIELDS: dict[type[BaseModel], set[str]] = {
    AgentAnswer: {"schema_version", "event_id", "run_id", "task_id", "patient_id", "field_id",
                  "agent_id", "answer", "evidence", "rationale", "confidence",
                  "low_confidence_reason", "emitted_at"},
    JudgeJob: {"job_id", "kind", "task_id", "patient_id", "field_id", "answers", "normalized",
               "reasons", "detected_at", "source"},
    JudgeResult: {"result_id", "job_id", "kind", "status", "analysis", "validation",
                  "prompt_version", "provider", "model", "usage", "latency_ms", "judged_at"},
    JudgeAnalysis: {"suggested_answer", "reasoning", "evidence_pointers", "agent_correctness",
                    "classification_hint", "judge_confidence"},
    CellOutcome: {"outcome", "task_id", "patient_id", "field_id", "decided_at"},
}

DESIGN_TOPICS = {
    "agent_answers": "chart-review.agent-answers.v1",
    "judge_jobs": "chart-review.judge-jobs.v1",
    "cell_outcomes": "chart-review.cell-outcomes.v1",
    "judge_results": "chart-review.judge-results.v1",
    "adjudications": "chart-review.adjudications.v1",
    "calibration": "chart-review.calibration.v1",
    "debrief_requests": "medkit.debrief-requests.v1",
    "case_evaluations": "medkit.case-evaluations.v1",
}


@pytest.mark.parametrize("model", list(DESIGN_FIELDS), ids=lambda m: m.__name__)
def test_design_fields_are_present(model: type[BaseModel]) -> None:
    assert DESIGN_FIELDS[model] <= set(model.model_fields)


@pytest.mark.parametrize("model", list(DESIGN_FIELDS), ids=lambda m: m.__name__)
def test_unknown_keys_are_rejected_and_records_are_frozen(model: type[BaseModel]) -> None:
    assert model.model_config.get("extra") == "forbid"
    assert model.model_config.get("frozen") is True


def test_topic_defaults_are_the_design_names() -> None:
    assert {k: v for k, v in TopicSettings().model_dump().items() if k in DESIGN_TOPICS} == \
        DESIGN_TOPICS


def test_checked_in_json_schemas_match_the_models() -> None:
    assert check(JSON_DIR) == [], "run `judgeflow schemas generate` and commit schemas/json"
    assert {"AgentAnswer.json", "JudgeJob.json", "CellOutcome.json",
            "JudgeResult.json"} <= set(render_all())


def test_schemas_check_command_passes() -> None:
    proc = subprocess.run([sys.executable, "-m", "cli.main", "schemas", "check"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_dead_letter_headers_round_trip() -> None:
    at = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    raw = dead_letter_headers("schema_error", "confidence: too big", "t", 2, 41, now=at)
    assert [k for k, _ in raw] == ["error.type", "error.message", "source.topic",
                                   "source.partition", "source.offset", "failed_at"]
    back = DeadLetterHeaders.from_kafka(raw)
    assert (back.error_type, back.source_partition, back.source_offset, back.failed_at) == \
        ("schema_error", 2, 41, at)


def test_sample_adjudications_are_valid_and_unknown_keys_rejected() -> None:
    from schemas.calibration import Adjudication
    from streams.sampledata import DATA_DIR

    lines = (DATA_DIR / "adjudications.jsonl").read_bytes().splitlines()
    adjs = [Adjudication.model_validate_json(line) for line in lines]
    assert len(adjs) == len(lines) > 0
    assert all(a.cell == a.key for a in adjs)
    with pytest.raises(ValueError):
        Adjudication.model_validate({**adjs[0].model_dump(mode="json"), "reviewer_name": "x"})
    with pytest.raises(ValueError):  # the redundant cell key must agree with the ids
        Adjudication.model_validate({**adjs[0].model_dump(mode="json"), "cell": "a|b|c"})

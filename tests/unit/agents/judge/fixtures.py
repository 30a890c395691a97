"""A tiny phenotype skill, a patient chart and JudgeJob builders for judge tests."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from schemas.chart_review import AgentAnswer, Evidence, JudgeJob

TASK = "t2dm-ckd-v1"
PATIENT = "p001"
CRITERIA: dict[str, dict[str, Any]] = {
    "t2dm_dx": {"prompt": "Does the patient have type 2 diabetes mellitus?",
                "answer_schema": {"type": "boolean", "enum": [True, False, "no_info"]},
                "uses": {"edge_cases": ["family_history_mentions"]},
                "keywords": ["diabetes", "A1c"]},
    "on_sglt2i": {"prompt": "Is the patient currently prescribed an SGLT2 inhibitor?",
                  "answer_schema": {"type": "enum", "enum": ["yes", "no", "no_info"]},
                  "keywords": ["empagliflozin", "dapagliflozin"]},
    "latest_hba1c": {"prompt": "What is the most recent HbA1c?",
                     "answer_schema": {"type": "number", "unit": "%"},
                     "keywords": ["A1c"]},
}
NOTES = {
    "n01": "PROBLEM LIST\n1. Type 2 diabetes mellitus, on metformin since 2016.\n"
           "2. Hypertension.\nHbA1c 7.9% on 2024-03-01.\n",
    "n02": "FAMILY HISTORY: mother with type 2 diabetes.\nNo personal history of diabetes "
           "was recorded at this visit.\n",
    "n03": "MEDICATIONS: empagliflozin 10 mg daily started 2023-05-02.\n",
    "n04": "Endocrinology follow-up. Repeat A1c 8.2% on 2024-06-10. Diabetes management "
           "discussed.\n",
}


def write_skill(root: Path) -> Path:
    skill = root / "skill"
    (skill / "references" / "criteria").mkdir(parents=True)
    (skill / "references" / "edge_cases").mkdir(parents=True)
    (skill / "SKILL.md").write_text("# Test phenotype\n")
    for field_id, head in CRITERIA.items():
        front = yaml.safe_dump({"field_id": field_id, **head}, sort_keys=False)
        (skill / "references" / "criteria" / f"{field_id}.md").write_text(
            f"---\n{front}---\nDefinition of {field_id} for the tests.\n")
    (skill / "references" / "edge_cases" / "family_history_mentions.md").write_text(
        "A relative's diagnosis is not the patient's diagnosis.\n")
    return skill


def write_charts(root: Path) -> Path:
    charts = root / "charts"
    (charts / PATIENT).mkdir(parents=True)
    for note_id, text in NOTES.items():
        (charts / PATIENT / f"{note_id}.txt").write_text(text)
    return charts


def answer(agent: str, value: Any, *, field_id: str = "t2dm_dx", patient: str = PATIENT,
           quotes: tuple[tuple[str, str], ...] = (), confidence: Any = "high",
           reason: str | None = None) -> AgentAnswer:
    return AgentAnswer(
        event_id=f"{agent}-{field_id}-{patient}", run_id=f"run-{agent}", task_id=TASK,
        patient_id=patient, field_id=field_id, agent_id=agent, answer=value,
        evidence=tuple(Evidence(note_id=n, quote=q) for n, q in quotes),
        rationale=f"{agent} rationale", confidence=confidence, low_confidence_reason=reason,
        emitted_at=datetime(2025, 1, 1, tzinfo=UTC))


def job(kind: str, *answers: AgentAnswer, job_id: str | None = None,
        normalized: tuple[Any, ...] | None = None) -> JudgeJob:
    first = answers[0]
    return JudgeJob(
        job_id=job_id or f"job-{kind}-{first.field_id}-{first.patient_id}", kind=kind,  # type: ignore[arg-type]
        task_id=first.task_id, patient_id=first.patient_id, field_id=first.field_id,
        answers=answers, normalized=normalized or tuple(a.answer for a in answers),
        reasons=(f"test {kind}",), detected_at=datetime(2025, 1, 1, tzinfo=UTC))


def disagreement(field_id: str = "t2dm_dx", patient: str = PATIENT, job_id: str | None = None
                 ) -> JudgeJob:
    return job("disagreement",
               answer("default", True, field_id=field_id, patient=patient,
                      quotes=(("n01", "Type 2 diabetes mellitus, on metformin"),)),
               answer("skeptical", False, field_id=field_id, patient=patient,
                      quotes=(("n02", "No personal history of diabetes"),)), job_id=job_id)

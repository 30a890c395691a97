"""The free-text limits hold on the detector's fast path as on the model path: an answer
over a limit is refused as ``oversized`` (the fast path's PlainAnswer once hid these fields
from ``limits.text_problems``, so such answers were accepted)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from schemas.chart_review import AgentAnswer
from schemas.skill import Skill, load_skill
from streams import limits
from streams.detect.fastpath import fast_answer
from streams.detect.processor import DetectProcessor
from streams.detect.state import DetectConfig
from streams.errors import BadRecord

CRITERION = """---
field_id: dm_dx
prompt: Does the patient have type 2 diabetes?
answer_schema:
  type: boolean
  enum: [true, false, no_info]
---
A documented diagnosis.
"""
CFG = DetectConfig(("default", "skeptical"), 30, 100, 0.5)


@pytest.fixture()
def skill(tmp_path: Path) -> Skill:
    crit = tmp_path / "references" / "criteria"
    crit.mkdir(parents=True)
    (crit / "dm_dx.md").write_text(CRITERION)
    return load_skill(tmp_path)


def record(**extra: Any) -> dict[str, Any]:
    return {"event_id": "e1", "run_id": "r1", "task_id": "t", "patient_id": "P1",
            "field_id": "dm_dx", "agent_id": "default", "answer": True,
            "emitted_at": "2026-01-01T00:00:00Z", **extra}


@pytest.mark.parametrize(("extra", "field"), [
    ({"rationale": "x" * (limits.MAX_RATIONALE_CHARS + 1)}, "rationale"),
    ({"low_confidence_reason": "x" * (limits.MAX_REASON_CHARS + 1)}, "low_confidence_reason"),
    ({"evidence": [{"note_id": "n1", "quote": "q" * (limits.MAX_QUOTE_CHARS + 1)}]},
     "evidence[0].quote"),
    ({"evidence": [{"note_id": "n1", "quote": "q"}] * (limits.MAX_EVIDENCE_ITEMS + 1)},
     "evidence items"),
])
def test_text_over_a_limit_is_refused(skill: Skill, extra: dict[str, Any], field: str) -> None:
    data = record(**extra)
    assert fast_answer(data) is not None  # the fast path takes it: the limits must apply
    with pytest.raises(BadRecord) as err:
        DetectProcessor(skill, CFG).validate(orjson.dumps(data))
    assert err.value.error_type == "oversized"
    assert field in err.value.message
    # the same verdict as on the model itself
    assert limits.text_problems(AgentAnswer.model_validate(data)) == limits.text_problems(
        fast_answer(data))


def test_text_at_the_limits_is_accepted(skill: Skill) -> None:
    data = record(rationale="x" * limits.MAX_RATIONALE_CHARS,
                  evidence=[{"note_id": "n1", "quote": "q" * limits.MAX_QUOTE_CHARS}])
    assert DetectProcessor(skill, CFG).validate(orjson.dumps(data)).key == "t|P1|dm_dx"

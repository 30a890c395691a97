"""The judge's contracts: the schema the model answers with is the JudgeAnalysis contract,
and what the worker publishes is a valid JudgeResult keyed by the cell key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from agents.context.charts import ChartStore
from agents.judge.judge import Judge, fallback_analysis
from agents.judge.output_schema import FIELDS, POINTER_FIELDS, judge_output_schema
from agents.judge.run import encode_result
from agents.providers.factory import OfflineProvider
from agents.settings import Settings
from schemas.chart_review import EvidencePointer, JudgeAnalysis, JudgeResult
from schemas.skill import load_skill
from tests.unit.agents.judge.fixtures import disagreement, write_charts, write_skill


def _objects(node: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(node, dict):
        if node.get("type") == "object":
            found.append(node)
        for value in node.values():
            found += _objects(value)
    elif isinstance(node, list):
        for value in node:
            found += _objects(value)
    return found


def test_the_model_schema_is_exactly_the_judge_analysis_contract() -> None:
    schema = judge_output_schema()
    assert tuple(schema["properties"]) == FIELDS == tuple(JudgeAnalysis.model_fields)
    assert tuple(EvidencePointer.model_fields) == POINTER_FIELDS
    assert {k: v["enum"] for k, v in schema["properties"].items() if "enum" in v} == {
        "agent_correctness": ["agent_a", "agent_b", "neither", "both", "n_a"],
        "classification_hint": ["guideline_gap", "agent_a_error", "agent_b_error",
                                "true_ambiguity", "n_a"],
        "judge_confidence": ["low", "medium", "high"]}
    for obj in _objects(schema):  # closed objects, every key required (structured outputs)
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])
    assert "prefixItems" not in orjson.dumps(schema).decode()


def test_the_fallback_record_is_the_documented_one() -> None:
    a = fallback_analysis("notes missing")
    assert a.suggested_answer is None and a.judge_confidence == "low"
    assert a.reasoning == "judge could not analyze this cell: notes missing"


async def test_published_results_round_trip_as_judge_results(tmp_path: Path) -> None:
    skill = load_skill(write_skill(tmp_path))
    judge = Judge(Settings(), skill, ChartStore(write_charts(tmp_path)), OfflineProvider())
    job = disagreement()
    for j in (job, disagreement(patient="p404", job_id="j2")):
        result = await judge.judge(j)
        raw = encode_result(result)
        assert JudgeResult.model_validate_json(raw) == result
        assert result.key == j.key and result.job_id == j.job_id
    first, again = await judge.judge(job), await judge.judge(job)
    assert first.result_id == again.result_id  # f(job_id, prompt_version): deterministic

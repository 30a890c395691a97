"""The medkit contracts: checked-in JSON Schemas and the render_case_evaluation tool schema
are generated from the pydantic models and cannot drift from them."""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import BaseModel

from schemas import medkit
from schemas.generate import JSON_DIR, render_all
from schemas.registry import CONTRACTS


def _checked_in(name: str) -> Any:
    return orjson.loads((JSON_DIR / name).read_bytes())


def test_checked_in_medkit_files_match_the_models() -> None:
    rendered = render_all()
    for name in ("DebriefRequest.json", "CaseEvaluation.json", medkit.TOOL_FILE):
        assert (JSON_DIR / name).read_bytes() == rendered[name], f"{name} drifted: regenerate"


def test_tool_sent_to_the_model_is_the_checked_in_file() -> None:
    assert medkit.render_case_evaluation_tool() == _checked_in(medkit.TOOL_FILE)
    assert _checked_in(medkit.TOOL_FILE)["name"] == "render_case_evaluation"
    assert _checked_in(medkit.TOOL_FILE)["strict"] is True


def _objects(node: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if node.get("type") == "object":
            found.append(node)
        for value in node.values():
            found.extend(_objects(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_objects(value))
    return found


def test_tool_schema_is_strict_compatible() -> None:
    schema = medkit.render_case_evaluation_tool()["input_schema"]
    objects = _objects(schema)
    assert len(objects) >= 5
    for obj in objects:
        assert obj["additionalProperties"] is False
        assert sorted(obj["required"]) == sorted(obj["properties"])
    text = orjson.dumps(schema).decode()
    for keyword in ("minimum", "maximum", "minLength", '"default"'):
        assert keyword not in text


def _fields(model: type[BaseModel]) -> set[str]:
    return set(model.model_fields)


def test_every_tool_property_is_a_model_field_and_back() -> None:
    schema = medkit.render_case_evaluation_tool()["input_schema"]
    assert set(schema["properties"]) == _fields(medkit.CaseEvaluationInput)
    nested = {"Rating": medkit.Rating, "DomainScores": medkit.DomainScores,
              "CriterionEvaluation": medkit.CriterionEvaluation,
              "SafetyBreach": medkit.SafetyBreach}
    assert set(schema["$defs"]) == set(nested)
    for name, model in nested.items():
        assert set(schema["$defs"][name]["properties"]) == _fields(model), name
    # optional in the model -> nullable (and still required) in the tool
    breach = schema["properties"]["safety_breach"]
    assert {"type": "null"} in breach["anyOf"]


def test_published_envelope_extends_the_tool_payload_without_renaming() -> None:
    payload = _fields(medkit.CaseEvaluationInput)
    envelope = _fields(medkit.CaseEvaluation)
    assert payload <= envelope
    assert {"request_id", "prompt_version", "provider", "model", "usage", "dropped_criteria",
            "corrections", "rubric_source", "evaluated_at", "evaluation_id"} <= envelope


def test_medkit_topics_are_registered_and_keyed_by_request_id() -> None:
    assert CONTRACTS["debrief_requests"].model is medkit.DebriefRequest
    assert CONTRACTS["case_evaluations"].model is medkit.CaseEvaluation
    request = medkit.DebriefRequest.model_validate({
        "request_id": "req-1", "case_id": "case-1",
        "case_summary": {"chief_complaint": "cough", "correct_diagnosis": "asthma",
                         "severity": "low"},
        "encounter_log": {"diagnosis_correct": True}})
    assert CONTRACTS["debrief_requests"].key(request) == "req-1"


def test_registry_recommendation_ids_keep_their_camel_case_names() -> None:
    rec = medkit.Recommendation.model_validate({"recId": "R1", "text": "give aspirin"})
    assert rec.model_dump()["recId"] == "R1"
    slice_ = medkit.RegistrySlice.model_validate({"recommendations": [rec.model_dump()]})
    assert slice_.rec_ids == {"R1"}

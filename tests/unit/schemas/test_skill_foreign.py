"""Criterion files written by other teams: JSON-Schema answer schemas, other gate spellings,
unknown keys, other file formats; one broken file never takes the others down."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from schemas.skill import NO_INFO, Gate, SkillError, load_skill, read_skill
from streams.detect.normalize import canonicalize


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def md(front: str, body: str = "Definition.") -> str:
    return f"---\n{front.strip()}\n---\n{body}\n"


CKD_DX = md("field_id: ckd_dx\nprompt: CKD?\nanswer_schema: {type: boolean}")


def skill_with(tmp_path: Path, name: str, text: str) -> Path:
    write(tmp_path, "references/criteria/ckd_dx.md", CKD_DX)
    write(tmp_path, f"references/criteria/{name}", text)
    return tmp_path


def test_issue_reproduction_equals_list_gate_and_open_list(tmp_path: Path) -> None:
    """Both files of the issue used to stop the worker with a pydantic traceback."""
    write(tmp_path, "references/criteria/ckd_stage.md", md(
        "field_id: ckd_stage\nprompt: Stage?\nanswer_schema: {type: string, enum: ['3', '4', "
        "'5']}\ngate: {field_id: ckd_dx, value: true}"))
    write(tmp_path, "references/criteria/dialysis.md", md(
        "field_id: dialysis\nprompt: Dialysis?\nanswer_schema: {type: boolean}\n"
        "gate: {field_id: ckd_stage, equals: ['4', '5']}"))
    write(tmp_path, "references/criteria/meds.md", md(
        "field_id: meds\nprompt: Meds?\nanswer_schema: {type: list, items: string}"))
    write(tmp_path, "references/criteria/ckd_dx.md", CKD_DX)
    skill = load_skill(tmp_path)
    assert not skill.problems
    assert skill.criteria["dialysis"].gate == Gate(field_id="ckd_stage", values=("4", "5"))
    meds = skill.criteria["meds"].answer_schema
    assert (meds.type, meds.enum) == ("list", None)
    assert canonicalize(["Lisinopril ", "metformin", "lisinopril"], meds) == (
        "lisinopril", "metformin")


@pytest.mark.parametrize(("schema", "want"), [
    ("{type: boolean}", ("boolean", None, None)),
    ("{type: [boolean, 'null']}", ("boolean", None, None)),
    ("{type: string, enum: [a, b]}", ("enum", ("a", "b"), None)),
    ("{enum: [a, b, null]}", ("enum", ("a", "b"), None)),
    ("{type: integer, unit: mg/dL}", ("number", None, "mg/dL")),
    ("{type: number, x-unit: '%'}", ("number", None, "%")),
    ("{type: string, format: date}", ("date", None, None)),
    ("{type: string}", ("string", None, None)),
    ("{type: array, items: {type: string, enum: [x, y]}}", ("list", ("x", "y"), None)),
    ("{type: array, items: {type: string}}", ("list", None, None)),
    ("{type: list, items: string}", ("list", None, None)),
    ("{type: list, enum: [x]}", ("list", ("x",), None)),
    ("boolean", ("boolean", None, None)),
])
def test_json_schema_answer_schemas(tmp_path: Path, schema: str, want: tuple[object, ...]) -> None:
    skill = load_skill(skill_with(tmp_path, "c.md", md(
        f"field_id: c\nprompt: q\nanswer_schema: {schema}")))
    assert not skill.problems, skill.problems
    got = skill.criteria["c"].answer_schema
    assert (got.type, got.enum, got.unit) == want


@pytest.mark.parametrize(("gate", "values"), [
    ("{field_id: ckd_dx, value: true}", (True,)),
    ("{field_id: ckd_dx, equals: true}", (True,)),
    ("{field_id: ckd_dx, equals: [true, 'yes']}", (True, "yes")),
    ("{field: ckd_dx, in: [true]}", (True,)),
    ("{criterion: ckd_dx, one_of: [true, 'yes']}", (True, "yes")),
    ("{fieldId: ckd_dx, oneOf: [true]}", (True,)),
])
def test_gate_spellings(tmp_path: Path, gate: str, values: tuple[object, ...]) -> None:
    skill = load_skill(skill_with(tmp_path, "c.md", md(
        f"field_id: c\nprompt: q\nanswer_schema: {{type: boolean}}\ngate: {gate}")))
    assert not skill.problems, skill.problems
    got = skill.criteria["c"].gate
    assert got is not None and (got.field_id, got.values) == ("ckd_dx", values)
    assert got.value == (values[0] if len(values) == 1 else list(values))


def test_unknown_keys_warn_once_per_key_naming_the_file(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    skill_with(tmp_path, "c.md", md(
        "field_id: c\nprompt: q\nowner: kidney-team\nanswer_schema: {type: boolean, "
        "weight: 3}"))
    with caplog.at_level(logging.WARNING, logger="schemas.skill"):
        skill = load_skill(tmp_path)
    assert "c" in skill.criteria and not skill.problems
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2, lines
    assert any("c.md" in line and "'owner'" in line for line in lines)
    assert any("c.md" in line and "'answer_schema.weight'" in line for line in lines)
    assert all("\n" not in line for line in lines)


def test_yaml_and_json_files_and_other_key_spellings(tmp_path: Path) -> None:
    write(tmp_path, "criteria/ckd_dx.yaml",
          "id: ckd_dx\nquestion: CKD?\nschema: {type: boolean}\n")
    write(tmp_path, "criteria/egfr.json",
          '{"fieldId": "egfr", "question": "eGFR?", "answerSchema": '
          '{"type": "number", "unit": "mL/min"}, "appliesWhen": '
          '{"field": "ckd_dx", "equals": true}, "edgeCases": ["aki"], '
          '"description": "Most recent value."}')
    write(tmp_path, "edge_cases/aki.md", "# AKI\n")
    skill = load_skill(tmp_path)
    assert not skill.problems, skill.problems
    egfr = skill.criteria["egfr"]
    assert egfr.prompt == "eGFR?" and egfr.uses.edge_cases == ("aki",)
    assert egfr.gate is not None and egfr.gate.values == (True,)
    assert "Most recent value." in egfr.body


@pytest.mark.parametrize(("text", "problem"), [
    (md("field_id: c\nprompt: q\nanswer_schema: {type: enum}"), "enum"),
    (md("field_id: c\nprompt: q\nanswer_schema: {type: colour}"), "colour"),
    (md("field_id: c\nprompt: q"), "answer_schema"),
    (md("field_id: c\nprompt: q\nanswer_schema: {type: boolean}\ngate: {field_id: nope, "
        "value: 1}"), "nope"),
    (md("field_id: c\nprompt: q\nanswer_schema: {type: boolean}\ngate: {field_id: ckd_dx}"),
     "gate"),
    (md("field_id: c\nprompt: q\nanswer_schema: {type: boolean}\nuses: {edge_cases: [zz]}"),
     "zz"),
    (md("field_id: c\nprompt: q\nanswer_schema: {type: boolean}\nedge_cases: 5"), "edge_cases"),
    (md("field_id: c\nprompt: q\nanswer_schema: {type: boolean}\nuses: 7"), "uses"),
    (md("field_id: c\nprompt: q\nanswer_schema: {type: boolean}\ngate: [ckd_dx]"), "gate"),
    (md("field_id: c\nprompt: q\nanswer_schema: {type: [string, number]}"), "one type"),
    (md("field_id: c\nprompt: q\nanswer_schema: {enum: [[1]]}"), "plain values"),
    ("no front matter", "front matter"),
    (md("field_id: c\nprompt: [unclosed"), "YAML"),
    (md("field_id: ../c\nprompt: q\nanswer_schema: {type: boolean}"), "field_id"),
])
def test_a_broken_file_is_one_problem_and_the_rest_loads(
        tmp_path: Path, text: str, problem: str, caplog: pytest.LogCaptureFixture) -> None:
    skill_with(tmp_path, "c.md", text)
    with caplog.at_level(logging.WARNING, logger="schemas.skill"):
        skill = load_skill(tmp_path)
    assert list(skill.criteria) == ["ckd_dx"]
    assert list(skill.problems) == ["references/criteria/c.md"]
    assert problem in skill.problems["references/criteria/c.md"]
    assert "\n" not in skill.problems["references/criteria/c.md"]
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert len(errors) == 1 and "c.md" in errors[0] and "\n" not in errors[0]
    assert "c.md" in skill.unavailable_reason("c")


def test_answers_of_a_broken_criterion_name_the_reason(tmp_path: Path) -> None:
    skill_with(tmp_path, "c.md", md("field_id: c\nprompt: q\nanswer_schema: {type: enum}"))
    skill = read_skill(tmp_path)
    assert "c" in skill.unavailable
    assert "enum" in skill.unavailable_reason("c")
    assert "not a criterion" in skill.unavailable_reason("other")
    assert "other" not in skill.unavailable_reason("other")  # the sender's text, not echoed


@pytest.mark.parametrize("layout", ["missing", "empty", "no_files", "all_broken"])
def test_missing_or_empty_folder_is_one_line_error(tmp_path: Path, layout: str) -> None:
    root = tmp_path / "skill"
    if layout != "missing":
        root.mkdir()
    if layout == "no_files":
        (root / "references" / "criteria").mkdir(parents=True)
    if layout == "all_broken":
        write(root, "references/criteria/c.md", "oops")
    with pytest.raises(SkillError) as exc:
        load_skill(root)
    assert "\n" not in str(exc.value) and str(root) in str(exc.value)


def test_open_list_items_are_normalised_strings(tmp_path: Path) -> None:
    skill = load_skill(skill_with(tmp_path, "c.md", md(
        "field_id: c\nprompt: q\nanswer_schema: {type: array, items: {type: string}}")))
    schema = skill.criteria["c"].answer_schema
    assert canonicalize("Metformin;  insulin glargine ", schema) == (
        "insulin glargine", "metformin")
    assert canonicalize([1, "2"], schema) == ("1", "2")
    assert canonicalize([], schema) == ()
    assert canonicalize(None, schema) == NO_INFO
    assert canonicalize([{"x": 1}], schema) != canonicalize(["x"], schema)

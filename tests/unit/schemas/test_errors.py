"""schemas.errors: a ValidationError in words names fields and reasons, never input values."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from schemas.chart_review import AgentAnswer
from schemas.errors import EXTRA_KEY, ROOT, describe, describe_record, location

NAME = "Jane Q. Patientname"


class _Shapes(BaseModel):
    model_config = ConfigDict(extra="forbid")
    count: int = 0
    ratio: float = 0.0
    kind: Literal["a", "b"] = "a"
    short: str = Field("", max_length=5)
    code: str = Field("x", pattern=r"^[a-z]+$")
    items: list[int] = []



def invalid_fields(exc: ValidationError, root: str = ROOT) -> list[str]:
    """The distinct field paths with an error, sorted (no reasons at all)."""
    return sorted({location(e, root) for e in exc.errors(include_input=False)})


def _answer(**change: Any) -> dict[str, Any]:
    return {"event_id": "e1", "run_id": "r1", "task_id": "t", "patient_id": "p1",
            "field_id": "f", "agent_id": "a", "emitted_at": "2026-01-01T00:00:00Z", **change}


def _error(model: type[BaseModel], data: Any) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        model.model_validate(data)
    return info.value


# (model, input carrying the name, the field path that must be named)
LEAKS = [
    (_Shapes, {"count": NAME}, "count"),
    (_Shapes, {"ratio": NAME}, "ratio"),
    (_Shapes, {"kind": NAME}, "kind"),
    (_Shapes, {"short": NAME}, "short"),
    (_Shapes, {"code": NAME}, "code"),
    (_Shapes, {"items": [1, NAME]}, "items.1"),
    (_Shapes, NAME, "<root>"),
    (AgentAnswer, _answer(patient_id=NAME), "patient_id"),
    (AgentAnswer, _answer(confidence=NAME), "confidence.literal['low','medium','high']"),
    (AgentAnswer, _answer(emitted_at=NAME), "emitted_at"),
    (AgentAnswer, _answer(evidence=[{"note_id": "n1", "quote": 3, "x": NAME}]), "evidence.0.x"),
    (AgentAnswer, _answer(event_id=""), "event_id"),
]


@pytest.mark.parametrize(("model", "data", "path"), LEAKS)
def test_no_input_value_leaks(model: type[BaseModel], data: Any, path: str) -> None:
    exc = _error(model, data)
    if data != _answer(event_id=""):
        assert NAME in str(exc)  # pydantic's own text would leak it: the table is meaningful
    texts = [describe(exc), describe(exc, reason="type"), describe(exc, limit=1, more=True),
             ", ".join(invalid_fields(exc))]
    for text in texts:
        assert NAME not in text and "Patientname" not in text
    assert path in texts[0].replace(" ", "").replace('"', "'") or path in invalid_fields(exc)


def test_formats() -> None:
    exc = _error(_Shapes, {"count": "x", "ratio": "y", "kind": "c"})
    assert describe(exc) == ("count: Input should be a valid integer, unable to parse string "
                             "as an integer; ratio: Input should be a valid number, unable to "
                             "parse string as a number; kind: Input should be 'a' or 'b'")
    assert describe(exc, limit=1, reason="type", more=True) == "count: int_parsing; and 2 more"
    assert describe(exc, limit=1) == describe(exc).split("; ")[0]
    assert invalid_fields(exc) == ["count", "kind", "ratio"]
    root = _error(_Shapes, 3)
    assert describe(root, reason="type") == "<root>: model_type"
    assert describe(root, reason="type", root="") == ": model_type"
    assert location(root.errors()[0], root="-") == "-"


# -- the dead-letter wording: type and path, never values or the sender's key names --------

class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    kind: Literal["a", "b"]


@pytest.mark.parametrize(("data", "expected"), [
    ({"name": "x", "kind": "a", "P001-Jane-Doe": 1}, f"{EXTRA_KEY}: extra_forbidden"),
    ({"name": 5, "kind": "a"}, "name: string_type"),
    ({"name": "x", "kind": "secret-tag"}, "kind: literal_error"),
    ({"kind": "a"}, "name: missing"),
])
def test_describe_record_names_type_and_path_only(data: dict[str, Any], expected: str) -> None:
    with pytest.raises(ValidationError) as caught:
        _Strict.model_validate(data)
    text = describe_record(caught.value)
    assert text == expected
    assert "Jane" not in text and "secret" not in text

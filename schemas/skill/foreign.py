"""Meet criterion files written by other teams half way. Pure functions, no I/O.

Nothing in our criterion format is a standard, so a file from elsewhere is read through
these rules before it is validated against :class:`schemas.skill.Criterion`:

* keys in any case style (``answerSchema``, ``answer-schema``) and a few common synonyms
  (``id``, ``question``, ``schema``, ``applies_when``, top-level ``edge_cases``);
* JSON-Schema-style answer schemas: ``type`` boolean/string/number/integer/array/list (or a
  list of types with ``"null"``), ``enum``, ``items`` (a type name or a schema),
  ``format: date``, a unit (``unit``/``units``/``x-unit``), open lists without an enum;
* gates written as ``value``, ``equals`` (scalar or list), ``in``, ``one_of``.

Unknown keys are returned as warnings (the caller logs them); anything that cannot be read
raises ``ValueError`` with a one-line reason.
"""

from __future__ import annotations

import re
from typing import Any

#: Keys a JSON Schema may carry that say nothing about how answers compare: dropped quietly.
_QUIET = {"title", "description", "examples", "example", "$schema", "$id", "$comment",
          "default"}
_CRITERION = {
    "field_id": ("field_id", "id", "field", "criterion_id", "criterion"),
    "prompt": ("prompt", "question"),
    "answer_schema": ("answer_schema", "schema", "answer", "answer_format", "response_schema"),
    "gate": ("gate", "applies_when", "only_when", "only_if", "condition"),
    "uses": ("uses",),
    "edge_cases": ("edge_cases",),
    "keywords": ("keywords", "synonyms", "search_terms"),
    "body": ("body", "definition", "description", "notes", "guidance"),
}
_SCHEMA = {
    "type": ("type", "answer_type", "kind"),
    "enum": ("enum", "values", "options", "choices", "allowed_values"),
    "unit": ("unit", "units", "x_unit"),
    "format": ("format", "date_format"),
    "allows_no_info": ("allows_no_info", "allow_no_info", "nullable"),
    "items": ("items",),
}
_GATE_FIELD = ("field_id", "field", "criterion", "id")
_GATE_ONE = ("value", "equals", "eq", "is")
_GATE_MANY = ("in", "one_of", "any_of", "values")
_TYPES = {
    "boolean": "boolean", "bool": "boolean",
    "string": "string", "str": "string", "text": "string",
    "enum": "enum", "categorical": "enum", "category": "enum", "choice": "enum",
    "number": "number", "integer": "number", "int": "number", "float": "number",
    "numeric": "number", "decimal": "number",
    "date": "date",
    "array": "list", "list": "list", "set": "list",
}


def snake(key: object) -> str:
    """``answerSchema``, ``answer-schema``, ``Answer Schema`` -> ``answer_schema``."""
    text = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", str(key))
    return re.sub(r"[\s-]+", "_", text).lower()


def _rename(raw: dict[Any, Any], table: dict[str, tuple[str, ...]], where: str,
            warnings: list[str]) -> dict[str, Any]:
    lookup = {alias: name for name, aliases in table.items() for alias in aliases}
    out: dict[str, Any] = {}
    for key, value in raw.items():
        name = lookup.get(snake(key))
        if name is None:
            if str(key) not in _QUIET:
                warnings.append(f"unknown key {where + str(key)!r} ignored")
        elif name in out:
            raise ValueError(f"{where}{key!r} repeats {name!r}")
        else:
            out[name] = value
    return out


def criterion_fields(raw: dict[Any, Any]) -> tuple[dict[str, Any], list[str]]:
    """A criterion mapping in our spelling, plus the warnings about what was ignored."""
    warnings: list[str] = []
    data = _rename(raw, _CRITERION, "", warnings)
    if "answer_schema" in data:
        data["answer_schema"] = answer_schema(data["answer_schema"], warnings)
    if data.get("gate") is not None:
        data["gate"] = gate(data["gate"])
    uses = data.pop("uses", None)
    edge = data.pop("edge_cases", None)
    if isinstance(uses, list | tuple):
        uses = {"edge_cases": list(uses)}
    if uses is not None and not isinstance(uses, dict):
        raise ValueError("uses must be a mapping such as {edge_cases: [...]}")
    uses = _rename(uses or {}, {"edge_cases": ("edge_cases",)}, "uses.", warnings)
    names = [*_names(uses.get("edge_cases")), *_names(edge)]
    data["uses"] = {"edge_cases": [re.sub(r"\.(md|txt)$", "", str(n)) for n in names]}
    if isinstance(data.get("keywords"), str):
        data["keywords"] = [data["keywords"]]
    if isinstance(data.get("body"), list | tuple):
        data["body"] = "\n".join(map(str, data["body"]))
    return data, warnings


def _names(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list | tuple):
        raise ValueError("edge_cases must be a list of names")
    return list(value)


def answer_schema(raw: Any, warnings: list[str]) -> dict[str, Any]:
    """Our ``AnswerSchema`` fields from a JSON-Schema-style (or our own) answer schema."""
    if isinstance(raw, str):
        raw = {"type": raw}
    if not isinstance(raw, dict):
        raise ValueError("answer_schema must be a mapping or a type name")
    data = _rename(raw, _SCHEMA, "answer_schema.", warnings)
    enum = data.get("enum")
    if enum is not None:
        if not isinstance(enum, list | tuple) or any(isinstance(v, dict | list) for v in enum):
            raise ValueError("answer_schema.enum must be a list of plain values")
        if None in enum:
            data.setdefault("allows_no_info", True)
        data["enum"] = [v for v in enum if v is not None] or None
    kind = _type(data.get("type"), data)
    items = data.pop("items", None)
    if kind == "list" and items is not None and not data.get("enum"):
        item = answer_schema(items, warnings)
        data["enum"] = item.get("enum")
    if kind == "string" and str(data.get("format", "")).lower().startswith("date"):
        kind = "date"
    elif kind == "string" and data.get("enum"):
        kind = "enum"
    data["type"] = kind
    return data


def _type(raw: Any, data: dict[str, Any]) -> str:
    if isinstance(raw, list | tuple):  # JSON Schema: ["string", "null"]
        kinds = [t for t in raw if t != "null"]
        if len(kinds) != len(raw):
            data.setdefault("allows_no_info", True)
        if len(kinds) != 1:
            raise ValueError(f"answer_schema.type {list(raw)} must name one type")
        raw = kinds[0]
    if raw is None:
        enum = data.get("enum") or ()
        if not enum:
            raise ValueError("answer_schema has neither a type nor an enum")
        return "boolean" if all(isinstance(v, bool) or v == "no_info" for v in enum) else "enum"
    kind = _TYPES.get(snake(raw))
    if kind is None:
        raise ValueError(f"answer_schema.type {raw!r} is not a type answers can be compared "
                         "as (boolean, string, enum, number, integer, date, array, list)")
    return kind


def gate(raw: Any) -> dict[str, Any]:
    """``{field_id, values}`` from any of the accepted gate spellings."""
    if not isinstance(raw, dict):
        raise ValueError("gate must be a mapping such as {field_id: X, equals: V}")
    keys = {snake(k): v for k, v in raw.items()}
    field = [keys[k] for k in _GATE_FIELD if k in keys]
    ones = [k for k in _GATE_ONE if k in keys]
    manys = [k for k in _GATE_MANY if k in keys]
    extra = sorted(set(keys) - {*_GATE_FIELD, *_GATE_ONE, *_GATE_MANY})
    if extra:
        raise ValueError(f"gate has unknown keys {extra}")
    if len(field) != 1:
        raise ValueError("gate must name exactly one criterion (field_id)")
    if len(ones) + len(manys) != 1:
        raise ValueError("gate needs exactly one of value, equals, in, one_of")
    value = keys[(ones or manys)[0]]
    values = list(value) if isinstance(value, list | tuple) else [value]
    if manys and not isinstance(value, list | tuple):
        raise ValueError(f"gate.{manys[0]} must be a list")
    if not values:
        raise ValueError("gate lists no value")
    return {"field_id": field[0], "values": values}

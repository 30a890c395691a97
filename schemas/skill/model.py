"""The phenotype skill on disk: criterion files (YAML front matter + prose) and edge cases.

Layout (paths come only from configuration; ids are validated before they name a file)::

    <skill dir>/SKILL.md
    <skill dir>/references/criteria/<field_id>.md     (or criteria/, and .yaml/.yml/.json)
    <skill dir>/references/edge_cases/<name>.md       (or edge_cases/)

Files written by other teams are read through :mod:`schemas.skill.foreign`. One unusable
criterion file makes that criterion unavailable, not the whole skill.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from schemas.base import Frozen, SafeId, SchemaError, check_safe_id

AnswerType = Literal["boolean", "enum", "number", "date", "list", "string"]
NO_INFO = "no_info"
#: Where criterion and edge-case files may live (first existing folder wins).
CRITERIA_DIRS = ("references/criteria", "criteria")
EDGE_DIRS = ("references/edge_cases", "edge_cases", "references/edge-cases", "edge-cases")
CRITERION_SUFFIXES = (".md", ".yaml", ".yml", ".json")


class SkillError(SchemaError):
    """A skill folder or criterion file is missing or malformed."""


class AnswerSchema(Frozen):
    type: AnswerType
    #: Allowed values. boolean criteria: ``[true, false, "no_info"]``; enum criteria: strings;
    #: list criteria: the allowed items, or none for an open list (items compared as
    #: normalised strings).
    enum: tuple[Any, ...] | None = None
    #: number: the unit answers are expressed in (``"mg/dL"``); answers may carry it.
    unit: str | None = None
    #: date: the canonical format (always ISO ``YYYY-MM-DD`` here); informative.
    format: str | None = None
    #: Whether ``no_info``/null is an acceptable answer.
    allows_no_info: bool = True

    @model_validator(mode="after")
    def _enum_needed(self) -> AnswerSchema:
        if self.type == "enum" and not self.enum:
            raise ValueError("answer_schema of type 'enum' needs a non-empty enum")
        return self


class Gate(Frozen):
    """The criterion applies only when ``field_id`` has one of ``values``."""

    field_id: SafeId
    values: tuple[Any, ...] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _single_value(cls, data: Any) -> Any:
        if isinstance(data, dict) and "value" in data and "values" not in data:
            data = dict(data)
            value = data.pop("value")
            data["values"] = tuple(value) if isinstance(value, list | tuple) else (value,)
        return data

    @property
    def value(self) -> Any:
        """The gate value; a list when the gate admits several."""
        return self.values[0] if len(self.values) == 1 else list(self.values)


class Uses(Frozen):
    edge_cases: tuple[SafeId, ...] = ()


class Criterion(Frozen):
    field_id: SafeId
    prompt: str
    answer_schema: AnswerSchema
    gate: Gate | None = None
    uses: Uses = Field(default_factory=Uses)
    keywords: tuple[str, ...] = ()
    #: The prose under the front matter (definition, inclusion/exclusion notes).
    body: str = ""


class Skill(Frozen):
    root: Path
    name: str
    criteria: dict[str, Criterion]
    edge_cases: dict[str, str]
    #: Raw bytes of every file read, by path relative to ``root`` (for prompt versioning).
    files: dict[str, str]
    #: Unusable criterion files: relative path -> one-line reason.
    problems: dict[str, str] = Field(default_factory=dict)
    #: Criteria whose file is unusable: field id (and file stem) -> "<file>: <reason>".
    unavailable: dict[str, str] = Field(default_factory=dict)
    #: One line per ignored key or other oddity: "<file>: <what>".
    warnings: tuple[str, ...] = ()
    #: The file each usable criterion was read from (relative path), by field id.
    sources: dict[str, str] = Field(default_factory=dict)

    def criterion(self, field_id: str) -> Criterion | None:
        return self.criteria.get(field_id)

    def unavailable_reason(self, field_id: str) -> str:
        """Why answers for ``field_id`` cannot be decided (for the dead-letter header)."""
        if field_id in self.unavailable:
            return (f"criterion {field_id!r} of skill {self.name!r} is unavailable: "
                    f"{self.unavailable[field_id]}")
        # An unknown id is the sender's text, so it is not repeated (dead-letter headers
        # never carry values); a known but unavailable one names our own criterion.
        return f"the answer's field_id is not a criterion of skill {self.name!r}"


def safe_child(base: Path, *ids: str, suffix: str = "") -> Path:
    """``base/id1/id2<suffix>``, refusing any id that could escape ``base``."""
    for part in ids:
        check_safe_id(part)
    path = base.joinpath(*ids[:-1], ids[-1] + suffix) if ids else base
    resolved = path.resolve()
    if not resolved.is_relative_to(base.resolve()):
        raise SkillError("path escapes its base directory")
    return resolved

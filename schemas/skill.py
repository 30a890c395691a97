"""The phenotype skill on disk: criterion files (YAML front matter + prose) and edge cases.

Layout (paths come only from configuration; ids are validated before they name a file)::

    <skill dir>/SKILL.md
    <skill dir>/references/criteria/<field_id>.md
    <skill dir>/references/edge_cases/<name>.md
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError, model_validator

from schemas.base import Frozen, SafeId, SchemaError, check_safe_id

AnswerType = Literal["boolean", "enum", "number", "date", "list", "string"]
NO_INFO = "no_info"


class SkillError(SchemaError):
    """A skill folder or criterion file is missing or malformed."""


class AnswerSchema(Frozen):
    type: AnswerType
    #: Allowed values. boolean criteria: ``[true, false, "no_info"]``; enum criteria: strings;
    #: list criteria: the allowed items.
    enum: tuple[Any, ...] | None = None
    #: number: the unit answers are expressed in (``"mg/dL"``); answers may carry it.
    unit: str | None = None
    #: date: the canonical format (always ISO ``YYYY-MM-DD`` here); informative.
    format: str | None = None
    #: Whether ``no_info``/null is an acceptable answer.
    allows_no_info: bool = True

    @model_validator(mode="after")
    def _enum_needed(self) -> AnswerSchema:
        if self.type in ("enum", "list") and not self.enum:
            raise ValueError(f"answer_schema of type {self.type!r} needs a non-empty enum")
        return self


class Gate(Frozen):
    field_id: SafeId
    value: Any


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

    def criterion(self, field_id: str) -> Criterion | None:
        return self.criteria.get(field_id)


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    if not text.startswith("---"):
        raise SkillError("criterion file must start with YAML front matter ('---')")
    parts = text.split("\n---", 2)
    if len(parts) < 2:
        raise SkillError("unterminated YAML front matter")
    head = parts[0][3:]
    body = parts[1].split("\n", 1)[1] if "\n" in parts[1] else ""
    data = yaml.safe_load(head) or {}
    if not isinstance(data, dict):
        raise SkillError("front matter must be a mapping")
    return data, body.strip()


def load_criterion(path: Path) -> Criterion:
    data, body = split_front_matter(path.read_text(encoding="utf-8"))
    try:
        crit = Criterion.model_validate({**data, "body": body})
    except ValidationError as exc:
        raise SkillError(f"{path.name}: {exc}") from exc
    if crit.field_id != path.stem:
        raise SkillError(f"{path.name}: field_id {crit.field_id!r} does not match the file name")
    return crit


def load_skill(root: Path) -> Skill:
    """Read a whole skill folder; raises SkillError with the offending file named."""
    root = root.resolve()
    crit_dir = root / "references" / "criteria"
    if not crit_dir.is_dir():
        raise SkillError(f"no criteria folder at {crit_dir}")
    files: dict[str, str] = {}
    skill_md = root / "SKILL.md"
    if skill_md.is_file():
        files["SKILL.md"] = skill_md.read_text(encoding="utf-8")
    criteria: dict[str, Criterion] = {}
    for path in sorted(crit_dir.glob("*.md")):
        criteria[path.stem] = load_criterion(path)
        files[f"references/criteria/{path.name}"] = path.read_text(encoding="utf-8")
    edge_cases: dict[str, str] = {}
    edge_dir = root / "references" / "edge_cases"
    for path in sorted(edge_dir.glob("*.md")) if edge_dir.is_dir() else []:
        edge_cases[path.stem] = path.read_text(encoding="utf-8")
        files[f"references/edge_cases/{path.name}"] = edge_cases[path.stem]
    for crit in criteria.values():
        missing = [e for e in crit.uses.edge_cases if e not in edge_cases]
        if missing:
            raise SkillError(f"criterion {crit.field_id}: unknown edge cases {missing}")
        if crit.gate and crit.gate.field_id not in criteria:
            raise SkillError(f"criterion {crit.field_id}: gate names unknown {crit.gate.field_id}")
    if not criteria:
        raise SkillError(f"no criterion files in {crit_dir}")
    return Skill(root=root, name=root.name, criteria=criteria, edge_cases=edge_cases, files=files)


def safe_child(base: Path, *ids: str, suffix: str = "") -> Path:
    """``base/id1/id2<suffix>``, refusing any id that could escape ``base``."""
    for part in ids:
        check_safe_id(part)
    path = base.joinpath(*ids[:-1], ids[-1] + suffix) if ids else base
    resolved = path.resolve()
    if not resolved.is_relative_to(base.resolve()):
        raise SkillError("path escapes its base directory")
    return resolved

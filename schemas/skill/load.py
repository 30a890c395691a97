"""Read a skill folder from disk, file by file (models and layout: :mod:`schemas.skill`).

Each criterion file goes through :mod:`schemas.skill.foreign` (other teams' spellings) and
then the :class:`~schemas.skill.Criterion` model. An unusable file is recorded with a one-line
reason and makes only its criterion unavailable.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from schemas.base import check_safe_id
from schemas.errors import describe
from schemas.skill.foreign import criterion_fields
from schemas.skill.model import (
    CRITERIA_DIRS,
    CRITERION_SUFFIXES,
    EDGE_DIRS,
    Criterion,
    Skill,
    SkillError,
)

#: The worker-facing name: operators filter start-up problems on ``schemas.skill``.
log = logging.getLogger("schemas.skill")


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    if not text.startswith("---"):
        raise SkillError("criterion file must start with YAML front matter ('---')")
    parts = text.split("\n---", 2)
    if len(parts) < 2:
        raise SkillError("unterminated YAML front matter")
    head = parts[0][3:]
    body = parts[1].split("\n", 1)[1] if "\n" in parts[1] else ""
    data = _yaml(head)
    if not isinstance(data, dict):
        raise SkillError("front matter must be a mapping")
    return data, body.strip()


def _yaml(text: str) -> Any:
    try:
        return yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise SkillError(f"invalid YAML{where}: {getattr(exc, 'problem', None) or exc}"
                         ) from None


def parse_file(path: Path, text: str) -> tuple[dict[str, Any], str]:
    """(mapping, prose) of a criterion file: Markdown with front matter, YAML or JSON."""
    if path.suffix == ".md":
        return split_front_matter(text)
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SkillError(f"invalid JSON: {exc}") from None
    else:
        data = _yaml(text)
    if not isinstance(data, dict):
        raise SkillError(f"{path.suffix[1:].upper()} criterion file must hold one mapping")
    return data, ""


def read_criterion(path: Path, text: str) -> tuple[Criterion, list[str]]:
    """One criterion file -> (criterion, warnings); SkillError carries a one-line reason."""
    data, prose = parse_file(path, text)
    try:
        fields, warnings = criterion_fields(data)
    except ValueError as exc:
        raise SkillError(str(exc)) from None
    if prose:
        fields["body"] = f"{fields.get('body') or ''}\n\n{prose}".strip()
    if "field_id" not in fields:
        fields["field_id"] = path.stem
        warnings.append("no field_id; the file name is used")
    try:
        crit = Criterion.model_validate(fields)
    except ValidationError as exc:
        raise SkillError(describe(exc)) from None
    if crit.field_id != path.stem:
        warnings.append(f"field_id {crit.field_id!r} differs from the file name")
    return crit, warnings


def load_criterion(path: Path) -> Criterion:
    try:
        return read_criterion(path, path.read_text(encoding="utf-8"))[0]
    except SkillError as exc:
        raise SkillError(f"{path.name}: {exc}") from None


def _first_dir(root: Path, names: tuple[str, ...]) -> Path | None:
    return next((root / n for n in names if (root / n).is_dir()), None)


def _declared_id(path: Path, text: str) -> str:
    try:
        data = parse_file(path, text)[0]
        value = str(criterion_fields(data)[0].get("field_id", path.stem))
        return check_safe_id(value)
    except (SkillError, ValueError):
        return path.stem


def read_skill(root: Path) -> Skill:
    """Read a skill folder file by file: an unusable file is recorded in ``problems`` (its
    criterion is unavailable), never raised. Raises SkillError only when there is no
    folder or no criteria folder."""
    root = root.resolve()
    if root.exists() and not root.is_dir():
        raise SkillError(f"{root} is a file, not a skill folder")
    if not root.is_dir():
        raise SkillError(f"skill folder {root} does not exist")
    crit_dir = _first_dir(root, CRITERIA_DIRS)
    if crit_dir is None:
        raise SkillError(f"skill folder {root} has no criteria folder "
                         f"({' or '.join(CRITERIA_DIRS)})")
    files: dict[str, str] = {}
    if (root / "SKILL.md").is_file():
        files["SKILL.md"] = (root / "SKILL.md").read_text(encoding="utf-8")
    criteria: dict[str, Criterion] = {}
    problems: dict[str, str] = {}
    bad: dict[str, str] = {}
    warnings: list[str] = []
    where: dict[str, str] = {}
    for path in sorted(p for p in crit_dir.iterdir() if p.suffix in CRITERION_SUFFIXES):
        rel = path.relative_to(root).as_posix()
        try:
            text = files[rel] = path.read_text(encoding="utf-8")
            crit, notes = read_criterion(path, text)
        except (SkillError, OSError, UnicodeDecodeError) as exc:
            problems[rel] = str(exc).replace("\n", " ")
            bad[path.stem] = bad[_declared_id(path, files.get(rel, ""))] = f"{rel}: {exc}"
            continue
        warnings.extend(f"{rel}: {note}" for note in notes)
        if crit.field_id in criteria:
            problems[rel] = f"field_id {crit.field_id!r} is also defined in {where[crit.field_id]}"
            continue
        criteria[crit.field_id], where[crit.field_id] = crit, rel
    edge_cases: dict[str, str] = {}
    edge_dir = _first_dir(root, EDGE_DIRS)
    for path in sorted(edge_dir.iterdir()) if edge_dir is not None else []:
        if path.suffix in (".md", ".txt") and path.is_file():
            rel = path.relative_to(root).as_posix()
            edge_cases[path.stem] = files[rel] = path.read_text(encoding="utf-8")
    for field_id, crit in list(criteria.items()):
        missing = [e for e in crit.uses.edge_cases if e not in edge_cases]
        gate = crit.gate.field_id if crit.gate else None
        reason = (f"unknown edge cases {missing}" if missing else
                  f"gate names unknown criterion {gate!r}"
                  if gate and gate not in criteria and gate not in bad else None)
        if reason:
            problems[where[field_id]] = reason
            bad[field_id] = f"{where[field_id]}: {reason}"
            del criteria[field_id]
    return Skill(root=root, name=root.name, criteria=criteria, edge_cases=edge_cases,
                 files=files, problems=problems, unavailable=bad, warnings=tuple(warnings),
                 sources={f: where[f] for f in criteria})


def load_skill(root: Path) -> Skill:
    """Read a skill folder for a worker: log one line per unusable file (ERROR) and per
    ignored key (WARNING); raise SkillError (one line) when no criterion is usable."""
    skill = read_skill(root)
    for note in skill.warnings:
        log.warning("skill %s: %s", skill.name, note)
    for rel, reason in skill.problems.items():
        log.error("skill %s: %s is unusable, its criterion is unavailable: %s",
                  skill.name, rel, reason)
    if not skill.criteria:
        first = next(iter(skill.problems.items()), None)
        detail = (f"{len(skill.problems)} unusable, e.g. {first[0]}: {first[1]}" if first
                  else f"no {'/'.join(CRITERION_SUFFIXES)} files")
        raise SkillError(f"skill folder {skill.root} has no usable criterion ({detail})")
    return skill

"""``judgeflow skill check [DIR]``: lint a phenotype skill folder before a worker loads it.

Prints one row per criterion file: criterion, answer type, enum, gate, edge cases and
problems (unusable files) or warnings (ignored keys). Exit 0 when every file is usable, 1
when some file is not (``--strict``: or when anything was ignored), 2 when the folder is
missing or holds no criterion file.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from schemas.skill import Skill, read_skill
from streams.exit_codes import CommandError, ExitCode
from streams.settings import Settings

HEADERS = ("criterion", "answer type", "enum", "gate", "edge cases", "problems")
WIDTH = 40


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("skill", help="inspect a phenotype skill folder",
                       description="Inspect a phenotype skill folder (criterion files in "
                       "references/criteria/ or criteria/: Markdown with YAML front matter, "
                       "YAML or JSON).")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser(
        "check", help="lint a skill folder and print a table of its criteria",
        description="Lint a skill folder: one row per criterion (answer type, enum, gate, "
        "edge cases, problems). Exit 0 when every criterion file is usable, 1 when some is "
        "not, 2 when the folder is missing or has no criterion files.")
    check.add_argument("dir", nargs="?", type=Path, metavar="DIR",
                       help="the skill folder (default: $JUDGEFLOW_SKILL_DIR)")
    check.add_argument("--json", action="store_true", help="print one JSON object instead")
    check.add_argument("--strict", action="store_true",
                       help="exit 1 on warnings (ignored keys) as well")
    check.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    root = args.dir or settings.skill_dir
    skill = read_skill(root)  # a missing folder: SkillError, one line (cli.errors)
    if not skill.criteria and not skill.problems:
        raise CommandError(f"skill folder {skill.root} has no criterion files")
    report = build_report(skill)
    if args.json:
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        print(render(report))
    failed = bool(skill.problems) or (args.strict and bool(skill.warnings))
    return ExitCode.FAILURE if failed else ExitCode.OK


def build_report(skill: Skill) -> dict[str, Any]:
    """Rows for usable criteria and for unusable files, in file order."""
    rows: list[dict[str, Any]] = []
    for field_id, crit in skill.criteria.items():
        schema, gate, rel = crit.answer_schema, crit.gate, skill.sources[field_id]
        rows.append({
            "file": rel, "criterion": field_id, "answer_type": schema.type,
            "enum": None if schema.enum is None else list(schema.enum),
            "open_list": schema.type == "list" and not schema.enum, "unit": schema.unit,
            "gate": None if gate is None else {"field_id": gate.field_id,
                                               "values": list(gate.values)},
            "edge_cases": list(crit.uses.edge_cases), "problems": [],
            "warnings": [w.split(": ", 1)[1] for w in skill.warnings
                         if w.startswith(rel + ": ")],
        })
    for rel, reason in skill.problems.items():
        stem = Path(rel).stem
        rows.append({"file": rel, "criterion": stem, "answer_type": None, "enum": None,
                     "open_list": False, "unit": None, "gate": None, "edge_cases": [],
                     "problems": [reason], "warnings": []})
    rows.sort(key=lambda r: r["file"])
    return {"skill": skill.name, "root": str(skill.root), "ok": not skill.problems,
            "criteria": rows, "problems": dict(skill.problems),
            "warnings": list(skill.warnings)}


def _cell(row: dict[str, Any], column: str) -> str:
    if column == "criterion":
        return str(row["criterion"])
    if column == "answer type":
        kind = row["answer_type"] or "-"
        return f"{kind} ({row['unit']})" if row["unit"] else kind
    if column == "enum":
        if row["open_list"]:
            return "(open list)"
        return _short(", ".join(json.dumps(v) for v in row["enum"])) if row["enum"] else "-"
    if column == "gate":
        gate = row["gate"]
        if gate is None:
            return "-"
        values = ", ".join(json.dumps(v) for v in gate["values"])
        return _short(f"{gate['field_id']} in [{values}]" if len(gate["values"]) > 1
                      else f"{gate['field_id']} = {values}")
    if column == "edge cases":
        return _short(", ".join(row["edge_cases"])) or "-"
    notes = [f"ERROR {p}" for p in row["problems"]] + [f"warning: {w}" for w in row["warnings"]]
    return "; ".join(notes) or "ok"


def _short(text: str) -> str:
    return text if len(text) <= WIDTH else text[: WIDTH - 3] + "..."


def render(report: dict[str, Any]) -> str:
    table = [list(HEADERS)] + [[_cell(r, c) for c in HEADERS] for r in report["criteria"]]
    widths = [max(len(line[i]) for line in table) for i in range(len(HEADERS) - 1)]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=False)) + "  "
             + line[-1] for line in table]
    bad = len(report["problems"])
    lines.append(f"{report['skill']}: {len(report['criteria']) - bad} usable, {bad} unusable, "
                 f"{len(report['warnings'])} warning(s)")
    return "\n".join(lines)

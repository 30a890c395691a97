"""The checked-in synthetic sample data: valid, self-consistent and exactly reproducible."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import ValidationError

from schemas.base import check_safe_id
from schemas.chart_review import AgentAnswer
from schemas.skill import load_skill
from streams.sampledata import DATA_DIR
from tools.sampledata.canon import simulate
from tools.sampledata.generate import main as generate_main
from tools.sampledata.scenarios import AGENTS, INVENTED

README = Path(DATA_DIR).parent / "README.md"
OUTCOMES = {"agreement", "disagreement", "low_confidence", "type_drift", "agent_missing"}
CLASSES = {"guideline_gap", "agent_a_error", "agent_b_error", "true_ambiguity", "n_a"}


def _jsonl(name: str) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in (DATA_DIR / name).read_bytes().splitlines()]


@pytest.fixture(scope="module")
def events() -> list[dict[str, Any]]:
    return _jsonl("answers.jsonl")


@pytest.fixture(scope="module")
def truth() -> dict[str, dict[str, Any]]:
    rows = _jsonl("truth.jsonl")
    by_cell = {r["cell"]: r for r in rows}
    assert len(by_cell) == len(rows), "a cell appears twice in truth.jsonl"
    return by_cell


@pytest.fixture(scope="module")
def skill() -> Any:
    return load_skill(DATA_DIR / "skill")


def _note(patient_id: str, note_id: str) -> str:
    return (DATA_DIR / "charts" / patient_id / f"{note_id}.txt").read_text(encoding="ascii")


def test_skill_loads_with_the_required_criterion_kinds(skill: Any) -> None:
    crits = skill.criteria
    assert len(crits) >= 10 and len(skill.edge_cases) >= 4
    kinds = Counter(c.answer_schema.type for c in crits.values())
    assert kinds["boolean"] >= 3 and kinds["number"] >= 2
    assert kinds["date"] >= 1 and kinds["list"] >= 1
    enums = [tuple(c.answer_schema.enum) for c in crits.values() if c.answer_schema.type == "enum"]
    assert ("yes", "no", "no_info") in enums
    assert any("type_2" in e for e in enums)
    for c in crits.values():
        if c.answer_schema.type == "boolean":
            assert c.answer_schema.enum == (True, False, "no_info")
    assert {c.answer_schema.unit for c in crits.values() if c.answer_schema.unit} >= {
        "%", "mL/min/1.73m2"}
    assert crits["ckd_stage"].gate is not None and crits["ckd_stage"].gate.value is True
    assert all(c.body and c.keywords for c in crits.values())
    assert sum(bool(c.uses.edge_cases) for c in crits.values()) >= 4


def test_every_answer_validates_and_names_a_known_criterion(
    events: list[dict[str, Any]], skill: Any
) -> None:
    assert len(events) >= 600
    for line in (DATA_DIR / "answers.jsonl").read_bytes().splitlines():
        ans = AgentAnswer.model_validate_json(line)
        assert ans.field_id in skill.criteria
        assert ans.agent_id in AGENTS
        assert (DATA_DIR / "charts" / ans.patient_id).is_dir()
        conf = ans.confidence
        if conf == "low" or (not isinstance(conf, str) and conf < 0.5):
            assert ans.low_confidence_reason
    confidences = {type(e["confidence"]) for e in events}
    assert confidences == {str, float}


def test_event_ids_unique_except_identical_duplicates(events: list[dict[str, Any]]) -> None:
    seen: dict[str, dict[str, Any]] = {}
    dups = 0
    for ev in events:
        if ev["event_id"] in seen:
            assert seen[ev["event_id"]] == ev, "a reused event_id must be an exact resend"
            dups += 1
        seen[ev["event_id"]] = ev
    assert dups >= 3


def test_evidence_quotes_are_verbatim_unless_marked_invented(
    events: list[dict[str, Any]], truth: dict[str, dict[str, Any]]
) -> None:
    invented_cells = set()
    for ev in events:
        cell = f"{ev['task_id']}|{ev['patient_id']}|{ev['field_id']}"
        for item in ev["evidence"]:
            text = _note(ev["patient_id"], item["note_id"])
            start, end = item["offsets"]
            if text[start:end] == item["quote"]:
                continue
            assert truth[cell]["invented_quotes"], f"{ev['event_id']}: quote not at its offsets"
            assert item["quote"] not in text
            invented_cells.add(cell)
    marked = {c for c, t in truth.items() if t["invented_quotes"]}
    assert invented_cells == marked
    assert len(marked) == len(INVENTED)


def test_truth_covers_every_answered_cell_once(
    events: list[dict[str, Any]], truth: dict[str, dict[str, Any]]
) -> None:
    cells = {f"{e['task_id']}|{e['patient_id']}|{e['field_id']}" for e in events}
    assert cells == set(truth)
    for key, row in truth.items():
        assert key == f"{row['task_id']}|{row['patient_id']}|{row['field_id']}"
        assert row["outcome"] in OUTCOMES
        assert row["job_kinds"] == sorted(set(row["job_kinds"]))
        assert set(row["agents_correct"]) <= set(AGENTS)


def test_truth_follows_the_detector_rules(
    events: list[dict[str, Any]], truth: dict[str, dict[str, Any]], skill: Any
) -> None:
    schemas = {f: c.answer_schema.model_dump() for f, c in skill.criteria.items()}
    sim = simulate(events, schemas, AGENTS)
    for key, row in truth.items():
        assert (sim[key].outcome, sorted(set(sim[key].jobs))) == (row["outcome"],
                                                                  row["job_kinds"]), key


def test_outcome_and_scenario_minimums(truth: dict[str, dict[str, Any]]) -> None:
    rows = list(truth.values())
    outcomes = Counter(r["outcome"] for r in rows)
    assert outcomes.most_common(1)[0][0] == "agreement"
    assert outcomes["agreement"] > len(rows) / 2
    assert outcomes["disagreement"] >= 20
    assert outcomes["low_confidence"] >= 10 and outcomes["type_drift"] >= 10
    assert outcomes["agent_missing"] >= 5
    lone_low = [r for r in rows if r["outcome"] == "agent_missing" and r["job_kinds"]]
    assert lone_low and all(r["job_kinds"] == ["low_confidence"] for r in lone_low)
    scen = {r["scenario"].split("+")[0]: r for r in rows}
    assert scen["rerun_fixes_disagreement"]["job_kinds"] == ["disagreement"]
    assert scen["rerun_fixes_disagreement"]["outcome"] == "agreement"
    assert scen["rerun_breaks_agreement"]["outcome"] == "disagreement"
    assert scen["rerun_identical_agreement"]["job_kinds"] == []
    assert scen["rerun_identical_after_disagreement"]["job_kinds"] == ["disagreement"]
    assert scen["stale_run_late"]["outcome"] == "agreement"
    assert scen["off_schema_answer"]["outcome"] == "disagreement"
    drift = {r["scenario"] for r in rows if r["scenario"].startswith("type_drift_")}
    assert len(drift) >= 10
    assert sum("+duplicate" in r["scenario"] for r in rows) >= 3


def test_patients_and_notes(truth: dict[str, dict[str, Any]]) -> None:
    patients = sorted(p for p in (DATA_DIR / "charts").iterdir() if p.is_dir())
    assert len(patients) >= 30
    for pdir in patients:
        notes = sorted(pdir.glob("*.txt"))
        assert 3 <= len(notes) <= 5, pdir.name
        for note in notes:
            check_safe_id(note.stem)
            assert 1024 <= note.stat().st_size <= 4096, note
            assert note.read_bytes().isascii()
    assert {r["patient_id"] for r in truth.values()} == {p.name for p in patients}


def test_agents_interleave_and_first_answers_are_close(events: list[dict[str, Any]]) -> None:
    by_cell: dict[str, list[int]] = defaultdict(list)
    for i, ev in enumerate(events):
        by_cell[f"{ev['patient_id']}|{ev['field_id']}"].append(i)
    spans = [idx[1] - idx[0] for idx in by_cell.values() if len(idx) >= 2]
    assert sum(s > 1 for s in spans) > len(spans) / 2, "answers look sorted by cell"
    first: dict[str, dict[str, datetime]] = defaultdict(dict)
    for ev in events:
        at = datetime.fromisoformat(ev["emitted_at"].replace("Z", "+00:00"))
        seen = first[f"{ev['patient_id']}|{ev['field_id']}"]
        seen[ev["agent_id"]] = min(at, seen.get(ev["agent_id"], at))
    for cell, agents in first.items():
        if len(agents) == 2:
            gap = abs((agents["default"] - agents["skeptical"]).total_seconds())
            assert gap < 20, f"{cell}: first answers {gap:.0f}s apart (settle window is 30s)"


def test_adjudications_exactly_for_cells_with_jobs(truth: dict[str, dict[str, Any]]) -> None:
    adjs = _jsonl("adjudications.jsonl")
    by_cell = {a["cell"]: a for a in adjs}
    assert len(by_cell) == len(adjs)
    assert set(by_cell) == {c for c, t in truth.items() if t["job_kinds"]}
    for cell, adj in by_cell.items():
        assert adj["classification"] in CLASSES
        assert adj["final_answer"] == truth[cell]["correct_answer"]
        assert adj["adjudicator"] == "synthetic-reviewer-1"
    assert {a["classification"] for a in adjs} == CLASSES


def _classify(line: bytes, skill: Any) -> str:
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return "invalid_json"
    if not isinstance(obj, dict):
        return "invalid_json"
    try:
        ans = AgentAnswer.model_validate(obj)
    except ValidationError:
        return "schema_error"
    return "ok" if ans.field_id in skill.criteria else "unknown_criterion"


def test_malformed_records_fail_as_documented(skill: Any) -> None:
    lines = (DATA_DIR / "answers.malformed.jsonl").read_bytes().splitlines()
    doc = [row.split("\t") for row in (DATA_DIR / "answers.malformed.README").read_text()
           .splitlines() if row and not row.startswith("#")]
    assert 5 <= len(lines) <= 8 and len(doc) == len(lines)
    for line, (num, expected, _what) in zip(lines, doc, strict=True):
        assert _classify(line, skill) == expected, f"malformed line {num}"


def test_readme_describes_every_scenario(
    truth: dict[str, dict[str, Any]], events: list[dict[str, Any]]
) -> None:
    text = README.read_text(encoding="utf-8")
    counts = Counter(r["scenario"].split("+")[0] for r in truth.values())
    documented = {m[1]: int(m[2]) for m in re.finditer(r"^\| `([a-z_]+)` \| (\d+) \|", text,
                                                       re.MULTILINE)}
    assert documented == dict(counts)
    outcomes = Counter(r["outcome"] for r in truth.values())
    for outcome, n in outcomes.items():
        assert f"| {outcome} | {n} |" in text, outcome
    for cell, row in truth.items():
        if row["invented_quotes"]:
            assert cell in text
    ids = Counter(e["event_id"] for e in events)
    for event_id, n in ids.items():
        if n > 1:
            assert f"`{event_id}`" in text


def test_regenerating_gives_byte_identical_files(tmp_path: Path) -> None:
    assert generate_main(["--out", str(tmp_path)]) == 0
    fresh = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    checked_in = {p.relative_to(DATA_DIR).as_posix() for p in DATA_DIR.rglob("*") if p.is_file()}
    assert fresh == checked_in
    for rel in sorted(fresh):
        assert (tmp_path / rel).read_bytes() == (DATA_DIR / rel).read_bytes(), rel

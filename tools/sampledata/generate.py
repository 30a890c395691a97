"""Generate the synthetic sample data set (deterministic; stdlib + PyYAML + orjson).

Usage::

    python -m tools.sampledata.generate [--out DIR] [--seed N]

Writes ``skill/``, ``charts/``, ``answers.jsonl``, ``answers.malformed.jsonl`` (+ its README),
``truth.jsonl`` and ``adjudications.jsonl`` under DIR (default: the checked-in
``streams/sampledata/data``). The same seed always yields byte-identical files.
"""

from __future__ import annotations

import argparse
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson

from streams.sampledata import DATA_DIR
from tools.sampledata.canon import canonical, simulate, truth_json
from tools.sampledata.scenarios import AGENTS, T0, Cell, build_patients, plan, timeline
from tools.sampledata.skill_files import FIELD_IDS, TASK_ID, schema_of, skill_files

SEED = 20240506
MANAGED = ("skill", "charts")


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in rows)


def _stamp(minutes: float) -> str:
    t = T0 + timedelta(days=1, minutes=minutes)
    return f"{t:%Y-%m-%dT%H:%M:%S}Z"


def _correctness(right: list[str], answered: list[str]) -> str:
    """The reviewer's agent_correctness: which of agent A / agent B (AGENTS order) was right;
    ``n_a`` when only one agent answered (nothing to compare)."""
    if len(set(answered)) < 2:
        return "n_a"
    a_ok, b_ok = AGENTS[0] in right, AGENTS[1] in right
    return {(True, True): "both", (True, False): "agent_a", (False, True): "agent_b",
            (False, False): "neither"}[(a_ok, b_ok)]


def _truth_and_adjudications(
    cells: list[Cell], events: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    schemas = {f: schema_of(f) for f in FIELD_IDS}
    sim = simulate(events, schemas, AGENTS)
    truth: list[dict[str, Any]] = []
    adjudications: list[dict[str, Any]] = []
    for cell in sorted(cells, key=lambda c: (c.p.pid, FIELD_IDS.index(c.field))):
        st = sim[cell.key]
        schema = schemas[cell.field]
        jobs = sorted(set(st.jobs))
        want = (cell.expect[0], sorted(set(cell.expect[1])))
        if (st.outcome, jobs) != want:
            raise AssertionError(f"{cell.key} [{cell.scenario}]: got {st.outcome} {jobs}, "
                                 f"planned {want}")
        correct = canonical(cell.truth, schema)
        right = sorted(a for a, ev in st.answers.items()
                       if canonical(ev["answer"], schema) == correct)
        base = {"cell": cell.key, "task_id": TASK_ID, "patient_id": cell.p.pid,
                "field_id": cell.field}
        truth.append({**base, "outcome": st.outcome, "job_kinds": jobs,
                      "correct_answer": truth_json(correct), "agents_correct": right,
                      "scenario": cell.scenario,
                      "invented_quotes": any(a.invented for a in cell.answers)})
        if not jobs:
            continue
        if "disagreement" in jobs:
            klass = cell.p.ambiguity.get(cell.field) or (
                "agent_a_error" if cell.wrong == "default" else "agent_b_error")
            if cell.wrong is None:
                raise AssertionError(f"{cell.key}: disagreement without a wrong agent")
        else:
            klass = "n_a"
        adjudications.append({**base, "final_answer": truth_json(correct),
                              "classification": klass,
                              "agent_correctness": _correctness(right, list(st.answers)),
                              "adjudicator": "synthetic-reviewer-1",
                              "adjudicated_at": _stamp(6 * len(adjudications))})
    return truth, adjudications


MALFORMED_DOC = [
    ("invalid_json", "plain text, not JSON at all"),
    ("invalid_json", "a valid answer truncated after 90 bytes"),
    ("invalid_json", "a JSON array wrapping a valid answer (not an object)"),
    ("schema_error", "missing required fields task_id, agent_id and emitted_at"),
    ("schema_error", "extra unknown field reviewer_notes"),
    ("schema_error", "numeric confidence 1.7, outside [0, 1]"),
    ("unknown_criterion", "valid AgentAnswer whose field_id hba1c_trend is not in the skill"),
    ("schema_error", "patient_id '../P001' (unsafe id, path traversal)"),
]


def _malformed(template: dict[str, Any]) -> tuple[bytes, bytes]:
    def variant(n: int, **changes: Any) -> dict[str, Any]:
        ev = {**template, "event_id": f"evt-malformed-{n:02d}", **changes}
        return {k: v for k, v in ev.items() if v is not _DROP}

    valid = orjson.dumps(variant(2))
    lines = [
        b"patient P001 says yes to t2dm_dx, see chart",
        valid[:90],
        b"[" + orjson.dumps(variant(3)) + b"]",
        orjson.dumps(variant(4, task_id=_DROP, agent_id=_DROP, emitted_at=_DROP)),
        orjson.dumps(variant(5, reviewer_notes="double-checked by hand")),
        orjson.dumps(variant(6, confidence=1.7)),
        orjson.dumps(variant(7, field_id="hba1c_trend")),
        orjson.dumps(variant(8, patient_id="../P001")),
    ]
    doc = ["# answers.malformed.jsonl: one bad record per line, sent as raw bytes.",
           "# line<TAB>expected error.type header<TAB>what is wrong"]
    doc += [f"{i}\t{etype}\t{what}" for i, (etype, what) in enumerate(MALFORMED_DOC, start=1)]
    return b"".join(line + b"\n" for line in lines), ("\n".join(doc) + "\n").encode()


_DROP: Any = object()


def build(seed: int = SEED) -> dict[str, bytes]:
    """Every output file, by path relative to the output directory."""
    files = {f"skill/{rel}": text.encode() for rel, text in skill_files().items()}
    patients = build_patients(seed)
    for pt in patients:
        for note in pt.notes:
            files[f"charts/{pt.p.pid}/{note.note_id}.txt"] = note.text.encode("ascii")
    cells = plan(seed, patients)
    events = timeline(seed, cells)
    truth, adjudications = _truth_and_adjudications(cells, events)
    files["answers.jsonl"] = _jsonl(events)
    files["truth.jsonl"] = _jsonl(truth)
    files["adjudications.jsonl"] = _jsonl(adjudications)
    bad, doc = _malformed(events[0])
    files["answers.malformed.jsonl"] = bad
    files["answers.malformed.README"] = doc
    return files


def write(out: Path, files: dict[str, bytes]) -> None:
    """Write ``files`` under ``out``, removing stale generated files (skill/, charts/ only)."""
    out.mkdir(parents=True, exist_ok=True)
    for sub in MANAGED:
        root = out / sub
        for path in sorted(root.rglob("*"), reverse=True) if root.is_dir() else []:
            rel = path.relative_to(out).as_posix()
            if path.is_file() and rel not in files:
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    for rel, data in sorted(files.items()):
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def summary(files: dict[str, bytes]) -> str:
    truth = [orjson.loads(x) for x in files["truth.jsonl"].splitlines()]
    outcomes = Counter(t["outcome"] for t in truth)
    jobs = Counter(k for t in truth for k in t["job_kinds"])
    patients = {t["patient_id"] for t in truth}
    events = files["answers.jsonl"].count(b"\n")
    return (f"{len(patients)} patients, {len(truth)} cells, {events} events; "
            f"outcomes {dict(sorted(outcomes.items()))}; jobs {dict(sorted(jobs.items()))}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DATA_DIR, help="output directory")
    parser.add_argument("--seed", type=int, default=SEED, help="random seed")
    args = parser.parse_args(argv)
    files = build(args.seed)
    write(args.out, files)
    print(f"wrote {len(files)} files to {args.out}: {summary(files)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

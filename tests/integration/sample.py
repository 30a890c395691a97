"""The checked-in sample as the detector tests use it, plus an in-process reference run."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import orjson

from schemas.skill import Skill
from streams.detect.processor import DetectProcessor
from streams.detect.state import CellState, DetectConfig
from streams.errors import BadRecord
from streams.sampledata import DATA_DIR


@dataclass(frozen=True)
class Sample:
    answers: list[tuple[bytes, bytes]]  # (cell key, raw line) in file order
    malformed: list[bytes]
    malformed_types: list[str]
    truth: dict[str, dict[str, Any]]

    def by_cells(self, cells: set[str]) -> list[tuple[bytes, bytes]]:
        return [(k, v) for k, v in self.answers if k.decode() in cells]


def load_sample() -> Sample:
    answers = []
    for line in (DATA_DIR / "answers.jsonl").read_bytes().splitlines():
        rec = orjson.loads(line)
        key = f"{rec['task_id']}|{rec['patient_id']}|{rec['field_id']}".encode()
        answers.append((key, line))
    malformed = (DATA_DIR / "answers.malformed.jsonl").read_bytes().splitlines()
    types = [row.split("\t")[1] for row in
             (DATA_DIR / "answers.malformed.README").read_text().splitlines()
             if row and not row.startswith("#")]
    truth = {}
    for line in (DATA_DIR / "truth.jsonl").read_bytes().splitlines():
        rec = orjson.loads(line)
        truth[rec["cell"]] = rec
    return Sample(answers, malformed, types, truth)


def reference_jobs(sample: Sample, skill: Skill, expected: tuple[str, ...],
                   threshold: float) -> dict[str, set[str]]:
    """Job ids per cell from the pure processor over the file order, cells settled at the end."""
    return reference_ids(sample, skill, expected, threshold)["job"]


def reference_ids(sample: Sample, skill: Skill, expected: tuple[str, ...],
                  threshold: float) -> dict[str, dict[str, set[str]]]:
    """Job and outcome ids per cell (``{"job": ..., "outcome": ...}``), as reference_jobs."""
    proc = DetectProcessor(skill, DetectConfig(expected, 1.0, 1e9, threshold))
    states: dict[str, CellState | None] = {}
    ids: dict[str, dict[str, set[str]]] = {"job": defaultdict(set), "outcome": defaultdict(set)}

    def take(key: str, step: Any) -> None:
        if step.changed:
            states[key] = step.state
        for e in step.emits:
            ids[e.kind][key].add(orjson.loads(e.value)[f"{e.kind}_id"])

    for offset, (key, value) in enumerate(sample.answers):
        try:
            answer = proc.validate(value)
        except BadRecord:
            continue
        take(key.decode(), proc.on_answer(answer, ("a", 0, offset), states.get(key.decode()), 0.0))
    for key, state in list(states.items()):
        take(key, proc.on_tick(state, ("tick", 0, 0), 10.0))
    return ids

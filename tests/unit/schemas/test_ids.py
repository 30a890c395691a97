"""derive_id reproduces, byte for byte, the ids recorded before it replaced the per-site sha256
expressions (tests/data/recorded_ids.json; ids are a contract)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson
import pytest

from agents.debrief.grader import evaluation_id
from agents.judge.versioning import result_id
from schemas.ids import canonical_json, derive_id
from schemas.skill import load_skill
from streams.detect.processor import DetectProcessor
from streams.detect.state import DetectConfig
from streams.errors import BadRecord
from streams.settings import Settings
from tests.integration.sample import load_sample
from tests.unit.agents.calibrate import scenario as sc
from tests.unit.agents.calibrate.test_core import _fed

DATA = Path(__file__).parent.parent.parent / "data"
RECORDED: dict[str, Any] = json.loads((DATA / "recorded_ids.json").read_text())


def _sample_ids() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Job and outcome ids per cell: the sample in file order, every cell settled at the end."""
    s = Settings()
    proc = DetectProcessor(load_skill(s.skill_dir),
                           DetectConfig(s.expected_agents, 1.0, 1e9, s.low_confidence_threshold))
    states: dict[str, Any] = {}
    ids: dict[str, dict[str, set[str]]] = {"job": defaultdict(set), "outcome": defaultdict(set)}

    def take(key: str, step: Any) -> None:
        if step.changed:
            states[key] = step.state
        for e in step.emits:
            ids[e.kind][key].add(orjson.loads(e.value)[f"{e.kind}_id"])

    for offset, (raw_key, value) in enumerate(load_sample().answers):
        try:
            answer = proc.validate(value)
        except BadRecord:
            continue
        key = raw_key.decode()
        take(key, proc.on_answer(answer, ("a", 0, offset), states.get(key), 0.0))
    for key, state in list(states.items()):
        take(key, proc.on_tick(state, ("tick", 0, 0), 10.0))
    jobs, outcomes = ({k: sorted(v) for k, v in d.items()} for d in ids.values())
    return jobs, outcomes


def test_sample_job_and_outcome_ids_unchanged() -> None:
    jobs, outcomes = _sample_ids()
    assert jobs == RECORDED["job_ids"]
    assert jobs == json.loads((DATA / "baseline_job_ids.json").read_text())
    assert outcomes == RECORDED["outcome_ids"]
    assert sum(map(len, outcomes.values())) > len(outcomes) > 90


@pytest.mark.parametrize(("job_id", "version", "want"), RECORDED["result_ids"])
def test_result_ids(job_id: str, version: str, want: str) -> None:
    assert result_id(job_id, version) == want == derive_id(job_id, version, sep="|")


@pytest.mark.parametrize(("request_id", "version", "want"), RECORDED["evaluation_ids"])
def test_evaluation_ids(request_id: str, version: str, want: str) -> None:
    assert evaluation_id(request_id, version) == want


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_calibration_ids(version: str) -> None:
    record = _fed().record((sc.TASK, sc.FIELD, version), sc.T0)
    assert record.calibration_id == RECORDED["calibration_ids"][version]


def test_content_digests() -> None:
    want, system, tool = RECORDED["digests"]["debrief_prompt_version"]
    assert "debrief-v1+" + derive_id(system, canonical_json(tool), sep="", length=8) == want
    want, schema = RECORDED["digests"]["schema_sha"]
    assert derive_id(canonical_json(schema), length=None) == want


def test_separator_matters() -> None:
    """The parts are joined, not hashed one by one: a separator inside a part is ambiguous,
    which is why the default is the unit separator no id contains."""
    assert derive_id("a|b", "c", sep="|") == derive_id("a", "b|c", sep="|")
    assert derive_id("a|b", "c") != derive_id("a", "b|c")
    assert len(derive_id("x")) == 32 and len(derive_id("x", length=None)) == 64

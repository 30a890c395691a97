"""derive_id reproduces, byte for byte, the ids recorded before it replaced the per-site sha256
expressions (tests/data/recorded_ids.json; ids are a contract)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agents.debrief.grader import evaluation_id
from agents.judge.versioning import result_id
from agents.replay.plan import group_name
from agents.versioning import VersionInputs, prompt_version
from agents.versioning import result_id as agents_result_id
from schemas.ids import canonical_json, derive_id
from schemas.skill import load_skill
from streams.settings import Settings
from tests.integration.sample import load_sample, reference_ids
from tests.unit.agents.calibrate import scenario as sc
from tests.unit.agents.calibrate.test_core import _fed

DATA = Path(__file__).parent.parent.parent / "data"
RECORDED: dict[str, Any] = json.loads((DATA / "recorded_ids.json").read_text())


def test_sample_job_and_outcome_ids_unchanged() -> None:
    s = Settings()
    ids = reference_ids(load_sample(), load_skill(s.skill_dir), s.expected_agents,
                        s.low_confidence_threshold)
    jobs, outcomes = ({k: sorted(v) for k, v in d.items()} for d in ids.values())
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
    want, inputs = RECORDED["digests"]["prompt_version"]
    assert prompt_version(VersionInputs(**inputs)) == want
    want, worker, version, filters = RECORDED["digests"]["replay_group"]
    assert group_name(worker, version, filters) == want
    want, input_id, version = RECORDED["digests"]["agents_result_id"]
    assert agents_result_id(input_id, version) == want


def test_separator_matters() -> None:
    """The parts are joined, not hashed one by one: a separator inside a part is ambiguous,
    which is why the default is the unit separator no id contains."""
    assert derive_id("a|b", "c", sep="|") == derive_id("a", "b|c", sep="|")
    assert derive_id("a|b", "c") != derive_id("a", "b|c")
    assert len(derive_id("x")) == 32 and len(derive_id("x", length=None)) == 64

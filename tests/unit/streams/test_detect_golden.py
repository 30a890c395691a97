"""The detector against its recorded outputs (tests/unit/streams/golden/, see
:mod:`tests.unit.streams.detect_golden`): the sample and its malformed records, a synthetic
set, superseding re-runs, seeded mutations, other spellings of the same JSON, every answer
type of every test skill, and several agent configurations, with duplicates and settle and
purge ticks. Every step must give the recorded note, dead letter (type and message), output
bytes and stored cell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from schemas.skill import load_skill
from streams.settings import Settings
from tests.integration.sample import load_sample, reference_jobs
from tests.unit.streams import detect_golden as golden

BASELINE_IDS = Path(__file__).parent.parent.parent / "data" / "baseline_job_ids.json"

STREAMS = {name: (load, records, config) for name, load, records, config in golden.streams()}


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_outputs_as_recorded(name: str) -> None:
    load, records, config = STREAMS[name]
    want = golden.golden_lines(name)
    got = [golden.digest_line(s) for s in golden.steps(load(), records, config)]
    assert len(got) == len(want)
    for offset, (g, w) in enumerate(zip(got, want, strict=True)):
        assert json.loads(json.dumps(g)) == w, f"{name} step {offset}: {records[offset][0]!r}"


def test_sample_outputs_as_recorded() -> None:
    """The sample's job and outcome records in full (what a reader of the golden sees)."""
    want = [json.loads(line) for line in
            (golden.GOLDEN / "sample_outputs.jsonl").read_text().splitlines()]
    got: list[Any] = golden.sample_outputs(load_skill(Settings().skill_dir))
    assert len(got) == len(want)
    assert got == want


def test_streams_reach_every_verdict() -> None:
    """The streams are worth their lines: every note, each dead-letter type, every outcome."""
    lines = [line for name in STREAMS for line in golden.golden_lines(name)]
    notes = {line[0] for line in lines}
    assert {"new", "superseded", "duplicate", "stale", "settled", "purged", "unchanged",
            "tick-early", "tick-unknown"} <= notes, notes
    assert {line[1] for line in lines if line[0] == "dlq"} >= {
        "schema_error", "oversized", "invalid_json", "unknown_criterion"}
    outcomes = {rec[2]["outcome"] for rec in golden.sample_outputs(
        load_skill(Settings().skill_dir)) if rec[0] == "outcome"}
    assert outcomes == {"agreement", "disagreement", "type_drift", "low_confidence",
                        "agent_missing"}, outcomes


def test_sample_job_ids_unchanged() -> None:
    """The sample's job ids (what the judge, the dashboard and the replay files key on)."""
    s = Settings()
    jobs = reference_jobs(load_sample(), load_skill(s.skill_dir), s.expected_agents,
                          s.low_confidence_threshold)
    baseline = json.loads(BASELINE_IDS.read_text())
    assert {k: sorted(v) for k, v in jobs.items()} == baseline
    assert sum(len(v) for v in baseline.values()) == 97

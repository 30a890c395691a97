"""``bench detect --core``: our loop, the JSON floor and the bare Python detector run over the
same stream and are all reported."""

from __future__ import annotations

import pytest

from streams.settings import Settings
from tools.bench import detect_core


def test_core_run_reports_the_floor_the_bare_detector_and_ours(
        capsys: pytest.CaptureFixture[str]) -> None:
    us = detect_core.core_run(Settings().model_copy(update={"settle_seconds": 3600.0}), 400,
                              rounds=1)
    out = capsys.readouterr().out
    assert us > 0
    assert "JSON floor" in out and "bare Python detector" in out
    assert "x the bare detector" in out and "goal <= 200 µs" in out
    assert "our code alone (no Kafka)" in out


def test_the_bare_detector_refuses_records_it_was_not_written_for() -> None:
    from tools.bench.detect_bare import bare_loop

    with pytest.raises(ValueError):
        bare_loop([b'{"task_id":"t","patient_id":"../p","field_id":"f","agent_id":"a",'
                   b'"event_id":"e","run_id":"r","answer":1,"emitted_at":"2026-01-01T00:00:00Z"}'
                   ])()


@pytest.mark.parametrize("what", ["ours", "floor", "bare", "none"])
def test_the_callgrind_entry_runs_each_loop(what: str) -> None:
    assert detect_core.main([what, "200"]) == 0


def test_the_callgrind_entry_names_its_loops(capsys: pytest.CaptureFixture[str]) -> None:
    assert detect_core.main(["fast", "10"]) == 2
    assert "ours|floor|bare|none" in capsys.readouterr().out

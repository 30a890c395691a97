"""Counts, durations and amounts are checked by argparse: zero, negative or not finite is a
usage error (exit 2)."""

from __future__ import annotations

import argparse

import pytest

from cli.main import main
from streams.argtypes import non_negative_int, port, positive_float, positive_int


@pytest.mark.parametrize("fn, text, value", [
    (positive_int, "3", 3), (non_negative_int, "0", 0), (positive_float, "0.5", 0.5),
    (port, "0", 0), (port, "65535", 65535)])
def test_accepts(fn: object, text: str, value: float) -> None:
    assert callable(fn) and fn(text) == value


@pytest.mark.parametrize("fn, text", [
    (positive_int, "0"), (positive_int, "-3"), (positive_int, "x"), (positive_int, "1.5"),
    (non_negative_int, "-1"), (positive_float, "0"), (positive_float, "nan"),
    (positive_float, "-2"), (positive_float, "inf"), (positive_float, "-inf"),
    (positive_float, "NaN"), (positive_float, "1e999"), (positive_float, "x"),
    (port, "65536"), (port, "-1")])
def test_rejects(fn: object, text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        assert callable(fn) and fn(text)


@pytest.mark.parametrize("argv", [["llm", "check", "--calls", "0"],
                                  ["bench", "detect", "--events", "-5"],
                                  ["demo", "--timeout", "0"], ["dashboard", "--window", "0"],
                                  ["broker", "--port", "70000"],
                                  ["bench", "judge", "--concurrency", "0"],
                                  ["bench", "judge", "--tier-cells", "-1"],
                                  # nan never compares true: a budget of nan never stops
                                  ["replay", "judge", "--budget-usd", "nan"],
                                  ["replay", "judge", "--budget-usd", "-1"],
                                  ["replay", "debrief", "--budget-usd", "inf"],
                                  # 0, negative or nan: the batch poll loop spins
                                  ["replay", "judge", "--poll-seconds", "0"],
                                  ["replay", "judge", "--poll-seconds", "-3"],
                                  ["replay", "debrief", "--poll-seconds", "nan"],
                                  ["tail", "t", "--idle-timeout", "inf"],
                                  ["demo", "--settle", "nan"]])
def test_cli_counts_are_usage_errors(argv: list[str],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"error: argument {argv[-2]}" in err and "Traceback" not in err
    assert f"got {argv[-1]} (see" in err, err  # names the value it refused


def test_schemas_check_has_its_own_help_and_says_ok(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["schemas", "check", "--help"])
    assert "Compare schemas/json with what the models generate" in capsys.readouterr().out
    assert main(["schemas", "check"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok: ") and out.rstrip().endswith(" schemas match")
    assert int(out.split()[1]) > 0

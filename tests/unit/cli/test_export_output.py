"""``judgeflow export FILE`` checks FILE before it reads a topic or writes the "export" audit
event: the trail must not record an export that then fails. With the broker unreachable, a
bad FILE is still its own one-line usage error (exit 2), never "cannot reach Kafka"."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli.main import main

DOWN = ["--bootstrap-servers", "127.0.0.1:9"]

#: (FILE relative to a fresh folder, or absolute; extra options; what the one line says)
CASES = [
    (".", [], "is a directory: give a file name"),
    ("out", [], "is a directory: give a file name"),  # made a folder below
    ("missing/out.csv", [], "no such directory: "),
    ("/proc/judgeflow.csv", [], "cannot write /proc/judgeflow.csv: "),  # no new files (root too)
    ("-", ["--format", "parquet"], "only CSV can go to stdout ('-')"),
]


@pytest.mark.parametrize(("name", "extra", "says"), CASES,
                         ids=[f"{c[0]}{' '.join(c[1])}" for c in CASES])
def test_an_unwritable_output_is_refused_before_kafka(
        name: str, extra: list[str], says: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "out").mkdir()
    output = name if name.startswith("/") or name == "-" else str(tmp_path / name)
    assert main([*DOWN, "export", output, *extra]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1, err
    assert "Kafka" not in err and "Traceback" not in err


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes a read-only file")
def test_a_read_only_file_is_refused_before_kafka(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.csv"
    out.write_text("kept\n")
    out.chmod(0o444)
    assert main([*DOWN, "export", str(out)]) == 2
    assert f"cannot write {out}: Permission denied" in capsys.readouterr().err
    assert out.read_text() == "kept\n"


@pytest.mark.parametrize("exists", [False, True])
def test_a_writable_file_is_left_as_it_was(exists: bool, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.csv"
    if exists:
        out.write_text("earlier export\n")
    assert main([*DOWN, "export", str(out)]) == 1  # checked, then the broker is unreachable
    assert "cannot reach Kafka" in capsys.readouterr().err
    assert out.exists() == exists and (not exists or out.read_text() == "earlier export\n")

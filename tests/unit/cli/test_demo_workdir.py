"""``judgeflow demo`` removes its work directory after a successful run unless --keep-logs;
after a failure (or an interruption) the directory is kept and its path printed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import tools.demo.run
from cli.main import main


def _fake_demo(result: int | type[BaseException]) -> Any:
    def run(settings: Any, **kw: Any) -> int:
        assert kw["work_dir"].is_dir()
        (kw["work_dir"] / "detect.log").write_text("log\n")
        if not isinstance(result, int):
            raise result()
        return result
    return run


@pytest.mark.parametrize("argv, result, kept", [
    ([], 0, False), (["--keep-logs"], 0, True), ([], 1, True), ([], KeyboardInterrupt, True)])
def test_work_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                        capsys: pytest.CaptureFixture[str], argv: list[str],
                        result: int | type[BaseException], kept: bool) -> None:
    work = tmp_path / "judgeflow-demo-x"
    work.mkdir()
    monkeypatch.setattr("cli.demo.tempfile.mkdtemp", lambda prefix: str(work))
    monkeypatch.setattr(tools.demo.run, "run", _fake_demo(result))
    code = main(["demo", *argv])
    assert code == (result if isinstance(result, int) else 130)
    assert work.exists() == kept
    if result is KeyboardInterrupt:
        assert str(work) in capsys.readouterr().err


def test_help_mentions_calibrate_and_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "calibrate worker" in out and "accuracy" in out and "kappa" in out
    assert "--keep-logs" in out

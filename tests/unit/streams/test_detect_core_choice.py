"""``JUDGEFLOW_DETECT_CORE``: which detect core a worker runs, and the one line it stops with
when ``compiled`` is asked for and not there."""

from __future__ import annotations

import builtins
import logging
from typing import Any

import pytest

from schemas.skill import load_skill
from streams.detect import fastpath, native
from streams.detect.native import CompiledCoreMissing, choose_core, core_name
from streams.detect.state import DetectConfig
from streams.exit_codes import ExitCode
from streams.settings import Settings
from streams.worker_main import guarded

CFG = DetectConfig(("default", "skeptical"), 30.0, 100.0, 0.5)


@pytest.fixture
def no_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    real = builtins.__import__

    def refuse(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "judgeflow_native":
            raise ImportError("No module named 'judgeflow_native'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)


def test_python_never_loads_the_compiled_core() -> None:
    assert choose_core("python", load_skill(Settings().skill_dir), CFG) is None
    assert core_name(None) == "Python"


@pytest.mark.usefixtures("no_extension")
def test_auto_without_the_extension_runs_the_python_path() -> None:
    assert choose_core("auto", load_skill(Settings().skill_dir), CFG) is None


@pytest.mark.usefixtures("no_extension")
def test_compiled_without_the_extension_cannot_start(caplog: pytest.LogCaptureFixture) -> None:
    skill = load_skill(Settings().skill_dir)
    with pytest.raises(CompiledCoreMissing, match="judgeflow_native is not installed"):
        choose_core("compiled", skill, CFG)

    def start() -> None:
        choose_core("compiled", skill, CFG)

    with caplog.at_level(logging.ERROR):
        code = guarded("detect", start, cannot_start=(CompiledCoreMissing,))
    assert code == ExitCode.CANNOT_START
    (line,) = [r.getMessage() for r in caplog.records]
    assert "detect worker cannot start: JUDGEFLOW_DETECT_CORE=compiled" in line


def test_a_changed_answer_model_turns_the_compiled_core_off(monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    """The compiled core mirrors the fast path: when the fast path is off, so is it."""
    monkeypatch.setattr(fastpath, "ENABLED", False)
    skill = load_skill(Settings().skill_dir)
    assert native.load_core(skill, CFG) is None
    with pytest.raises(CompiledCoreMissing, match="answer model changed"):
        choose_core("compiled", skill, CFG)
    assert core_name(None) == "Python (the model path only)"


def test_the_setting_is_read_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUDGEFLOW_DETECT_CORE", "python")
    assert Settings().detect_core == "python"
    monkeypatch.setenv("JUDGEFLOW_DETECT_CORE", "rust")
    with pytest.raises(ValueError, match="detect_core"):
        Settings()


def test_a_configuration_the_compiled_core_refuses_falls_back_in_auto(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("judgeflow_native")
    monkeypatch.setattr(native, "core_config", lambda skill, cfg: b'{"expected_agents": 3}')
    skill = load_skill(Settings().skill_dir)
    with caplog.at_level(logging.WARNING):
        assert choose_core("auto", skill, CFG) is None
    assert "refused this configuration" in caplog.text
    with pytest.raises(CompiledCoreMissing, match="refused this configuration"):
        choose_core("compiled", skill, CFG)

"""A bad configuration is one line on stderr naming the setting, never its value."""

from __future__ import annotations

import pytest

from cli.main import main


def test_invalid_setting_names_the_field_not_the_value(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    secret = "sk-ant-Jane-Q-Patientname"
    monkeypatch.setenv("JUDGEFLOW_SETTLE_SECONDS", secret)
    assert main(["config"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("judgeflow: invalid configuration: settle_seconds: ")
    assert secret not in err and "Patientname" not in err
    assert err.count("\n") == 1

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
    assert err.startswith("judgeflow: invalid configuration: JUDGEFLOW_SETTLE_SECONDS: ")
    assert secret not in err and "Patientname" not in err
    assert err.count("\n") == 1


def test_the_compose_tls_dir_the_readme_names_does_not_stop_a_command(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("JUDGEFLOW_DASHBOARD_TLS_DIR", "./tls")
    assert main(["config"]) == 0
    assert capsys.readouterr().err == ""


def test_a_deprecated_setting_warns_once_and_runs(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("JUDGEFLOW_GROUPS__CALIBRATE", "my-group")
    assert main(["config"]) == 0
    out, err = capsys.readouterr()
    assert err == ("judgeflow: warning: JUDGEFLOW_GROUPS__CALIBRATE is ignored: the calibrate "
                   "worker reads whole topics and joins no consumer group; remove it\n")
    assert "GROUPS__CALIBRATE" not in out and "my-group" not in out


@pytest.mark.parametrize("name", ["JUDGEFLOW_LLM__EFFORT",
                                  "JUDGEFLOW_LLM__REGION", "JUDGEFLOW_LLM__PROJECT",
                                  "JUDGEFLOW_KAFKA__SASL_USERNAME",
                                  "JUDGEFLOW_KAFKA__SASL_MECHANISM",
                                  "JUDGEFLOW_KAFKA__SASL_PASSWORD"])
def test_config_shows_an_unset_setting_as_unset(name: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config"]) == 0
    assert f"{name}=<unset>\n" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["JUDGEFLOW_LLM__CRITERION_MODELS",
                                  "JUDGEFLOW_CHART_TOOLS__CRITERIA"])
def test_config_shows_an_empty_map_as_the_empty_json_value_one_would_set(
        name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config"]) == 0
    assert f"{name}={{}}\n" in capsys.readouterr().out


def test_config_shows_a_per_criterion_map_as_the_json_one_sets(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("JUDGEFLOW_CHART_TOOLS__CRITERIA", '{"ckd_dx": "on"}')
    assert main(["config"]) == 0
    assert 'JUDGEFLOW_CHART_TOOLS__CRITERIA={"ckd_dx":"on"}\n' in capsys.readouterr().out


@pytest.mark.parametrize(("env", "line"), [
    ({}, "ANTHROPIC_API_KEY=<unset>"),
    ({"ANTHROPIC_API_KEY": "sk-ant-secret"}, "ANTHROPIC_API_KEY=<set, hidden>"),
    ({"JUDGEFLOW_LLM__LOCAL_API_KEY": "lk-secret"}, "JUDGEFLOW_LLM__LOCAL_API_KEY=<set, hidden>"),
])
def test_config_shows_the_llm_keys_as_its_help_says(
        env: dict[str, str], line: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert f"{line}\n" in out and "secret" not in out


def test_config_never_prints_a_secret_and_shows_set_values(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    secret = "hunter2-Patientname"
    for name, value in {"JUDGEFLOW_KAFKA__SECURITY_PROTOCOL": "SASL_SSL",
                        "JUDGEFLOW_KAFKA__SASL_MECHANISM": "PLAIN",
                        "JUDGEFLOW_KAFKA__SASL_USERNAME": "reader",
                        "JUDGEFLOW_KAFKA__SASL_PASSWORD": secret,
                        "JUDGEFLOW_LLM__EFFORT": "low"}.items():
        monkeypatch.setenv(name, value)
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert secret not in out and "Patientname" not in out
    assert "JUDGEFLOW_KAFKA__SASL_PASSWORD=<set, hidden>\n" in out
    assert "JUDGEFLOW_KAFKA__SASL_USERNAME=reader\n" in out
    assert "JUDGEFLOW_LLM__EFFORT=low\n" in out
    assert "JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD=<unset>\n" in out


def test_config_help_says_unset_settings_are_shown(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["config", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "shows as <unset>" in text and "<set, hidden>" in text

"""Every user mistake issue 16 lists ends in one line on stderr and a non-zero exit status,
never a traceback, a silent no-op or a hang (driven through ``cli.main.main``)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from cli.main import main

#: variables of the AWS and Google credential chains, cleared for every case
CLOUD_CHAINS = ("AWS_", "GOOGLE_", "CLOUDSDK_", "ANTHROPIC_")

#: (environment, argv, exit status, what the one line must say)
CASES = [
    ({"JUDGEFLOW_LOG_LEVEL": "LOUD"}, ["config"], 2,
     "invalid configuration: JUDGEFLOW_LOG_LEVEL: must be one of DEBUG, INFO"),
    # a setting's mistake names the variable that sets it, never the internal field
    ({"JUDGEFLOW_SETTLE_SECONDS": "abc"}, ["config"], 2,
     "invalid configuration: JUDGEFLOW_SETTLE_SECONDS: Input should be a valid number"),
    # a bootstrap list a client cannot split: refused at load, before any command connects
    ({"JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS": "127.0.0.1:99999"}, ["tail", "t", "--max", "1"], 2,
     "invalid configuration: JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS: '127.0.0.1:99999': the port "
     "must be a number from 1 to 65535"),
    ({"JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS": "127.0.0.1:abc"}, ["kafka", "check"], 2,
     "JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS: '127.0.0.1:abc': the port must be"),
    ({"JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS": ""}, ["tail", "t", "--max", "1"], 2,
     "invalid configuration: JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS: is empty"),
    # an empty flag is refused, not read as "the environment's value"
    ({"JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS": "127.0.0.1:9"},
     ["--bootstrap-servers", "", "tail", "t", "--max", "1"], 2,
     "argument --bootstrap-servers: is empty: give host:port"),
    ({}, ["--bootstrap-servers", "h:0", "tail", "t", "--max", "1"], 2,
     "argument --bootstrap-servers: 'h:0': the port must be a number from 1 to 65535"),
    ({"JUDGEFLOW_KAFKA__CONNECT_TIMEOUT_SECONDS": "inf"}, ["kafka", "check"], 2,
     "invalid configuration: JUDGEFLOW_KAFKA__CONNECT_TIMEOUT_SECONDS: Input should be a "
     "finite number"),
    ({"JUDGEFLOW_TOPICS__JUDGE_JOBS": "bad topic"}, ["config"], 2,
     "invalid configuration: JUDGEFLOW_TOPICS__JUDGE_JOBS: a Kafka topic name is 1 to 245"),
    ({"JUDGEFLOW_STATE_DIR": ""}, ["config"], 2,
     "invalid configuration: JUDGEFLOW_STATE_DIR: is empty (that would be the working "
     "directory)"),
    ({}, ["--log-level", "LOUD", "config"], 2, "argument --log-level: invalid choice: 'LOUD'"),
    ({"JUDGEFLOW_EXPECTED_AGENTS_BY_TASK": "{bad"}, ["config"], 2,
     "invalid configuration: JUDGEFLOW_EXPECTED_AGENTS_BY_TASK is not valid JSON: Expecting"),
    ({"JUDGEFLOW_LLM__PROVDER": "anthropic"}, ["config"], 2,
     "unknown setting: JUDGEFLOW_LLM__PROVDER (did you mean JUDGEFLOW_LLM__PROVIDER?)"),
    ({"JUDGEFLOW_SETLE_SECONDS": "3", "JUDGEFLOW_KAFKA_PARTITIONS": "2"}, ["config"], 2,
     "unknown settings: JUDGEFLOW_KAFKA_PARTITIONS (did you mean JUDGEFLOW_KAFKA__PARTITIONS?);"
     " JUDGEFLOW_SETLE_SECONDS (did you mean JUDGEFLOW_SETTLE_SECONDS?)"),
    ({}, ["tail", "X", "--bootstrap-servers", "127.0.0.1:1"], 2,
     "--bootstrap-servers is a global option: put it before the command"),
    ({}, ["demo", "--dashbaord"], 2, "unrecognized arguments: --dashbaord; did you mean "
     "--dashboard?"),
    ({}, ["replay", "judge", "--dry-rn"], 2, "did you mean --dry-run?"),
    ({"JUDGEFLOW_LLM__PROVIDER": "anthropic"}, ["llm", "check"], 2,
     "llm.provider is anthropic but ANTHROPIC_API_KEY is not set"),
    # a provider asked for explicitly that cannot be checked is an error, as for bedrock
    ({}, ["llm", "check", "--provider", "anthropic"], 2,
     "judgeflow: llm check: --provider anthropic but ANTHROPIC_API_KEY is not set"),
    ({"JUDGEFLOW_LLM__PROVIDER": "bedrock", "AWS_REGION": "eu-west-1"}, ["llm", "check"], 2,
     "judgeflow: llm check: no bedrock credentials found"),
    ({"JUDGEFLOW_LLM__PROVIDER": "bedrock"}, ["llm", "check"], 2,
     "judgeflow: llm check: llm.provider bedrock needs a region: set JUDGEFLOW_LLM__REGION "
     "or AWS_REGION"),
    ({}, ["llm", "check", "--provider", "vertex"], 2,
     "judgeflow: llm check: llm.provider vertex needs a project"),
    ({"ANTHROPIC_VERTEX_PROJECT_ID": "p", "CLOUD_ML_REGION": "us-east5"},
     ["llm", "check", "--provider", "vertex"], 2,
     "judgeflow: llm check: no vertex credentials found"),
    ({"JUDGEFLOW_LLM__CRITERION_MODELS": "{bad"}, ["config"], 2,
     "invalid configuration: JUDGEFLOW_LLM__CRITERION_MODELS is not valid JSON: Expecting"),
    # the offline provider too: a typo must not wait for the switch to a paid one
    ({"JUDGEFLOW_LLM__CRITERION_MODELS": '{"nosuch": {"model": "gpt-4"}}'},
     ["worker", "judge"], 2, "llm.criterion_models['nosuch']: no such criterion in the skill"),
    ({"JUDGEFLOW_LLM__CRITERION_MODELS": '{"diabetes_type": {"model": "gpt-4"}}'},
     ["worker", "judge"], 2, "model 'gpt-4' is not in the model catalogue"),
    ({}, ["replay", "judge", "--budget-usd", "0"], 2,
     "argument --budget-usd: must be a positive finite number, got 0"),
    ({}, ["replay", "judge", "--budget-usd", "nan"], 2,
     "argument --budget-usd: must be a positive finite number, got nan"),
    ({}, ["replay", "judge", "--batch", "--poll-seconds", "0"], 2,
     "argument --poll-seconds: must be a positive finite number, got 0"),
    ({}, ["produce", "chart-review.agent-answers.v1", "/nonexistent.jsonl"], 2,
     "/nonexistent.jsonl: no such file"),
    ({}, ["produce", "no.such.topic", "-"], 2, "no schema known for topic 'no.such.topic'"),
    # a usage mistake, told before any connection (the broker of the tests is not running)
    ({"JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS": "127.0.0.1:9"},
     ["replay", "dlq", "chart-review.agent-answers.v1"], 2,
     "'chart-review.agent-answers.v1' is not a dead-letter topic (its name ends in .dlq)"),
]


def run(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exit_:  # argparse's usage errors
        return int(exit_.code or 0)


@pytest.mark.parametrize(("env", "argv", "code", "says"), CASES,
                         ids=[" ".join(c[1]) + "|" + ",".join(c[0]) for c in CASES])
def test_a_mistake_is_one_line_and_a_non_zero_exit(
        env: dict[str, str], argv: list[str], code: int, says: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    for name in [n for n in os.environ if n.startswith(CLOUD_CHAINS)]:
        monkeypatch.delenv(name)  # no platform credentials from the machine's environment
    monkeypatch.setenv("HOME", str(tmp_path))  # nor from ~/.aws, ~/.config/gcloud
    monkeypatch.setenv("JUDGEFLOW_STATE_DIR", str(tmp_path / "state"))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert run(argv) == code
    err = capsys.readouterr().err  # a worker's too: the command line prints it
    assert says in err
    assert err.count("\n") == 1 and "Traceback" not in err, err


def test_a_level_in_any_case_is_accepted(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--log-level", "debug", "config"]) == 0
    assert "JUDGEFLOW_LOG_LEVEL=DEBUG" in capsys.readouterr().out


def test_names_outside_settings_are_not_reported(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("JUDGEFLOW_DASHBOARD_TOKEN", "JUDGEFLOW_TEST_BROKER",
                 "JUDGEFLOW_EXPECTED_AGENTS_BY_TASK__TASK_A"):
        monkeypatch.setenv(name, "x" * 16 if "TOKEN" in name else '["a", "b", "c"]')
    assert main(["config"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("worker", ["judge", "debrief", "calibrate"])
def test_a_metrics_port_in_use_is_one_line(worker: str, monkeypatch: pytest.MonkeyPatch,
                                           tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("JUDGEFLOW_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS", "127.0.0.1:9")  # never reached
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        monkeypatch.setenv("JUDGEFLOW_METRICS_PORT", str(port))
        assert run(["worker", worker]) == 2
    err = capsys.readouterr().err
    assert err == (f"judgeflow: cannot serve metrics on 127.0.0.1:{port} (JUDGEFLOW_METRICS_HOST,"
                   " JUDGEFLOW_METRICS_PORT): Address already in use\n")

"""How a worker's end maps to its exit status, and what it logs (never an error's message
for an unexpected failure: it may quote input)."""

from __future__ import annotations

import logging

import pytest
from aiokafka.errors import KafkaConnectionError

from agents.errors import AgentsError
from schemas.skill import SkillError
from streams.exit_codes import CommandError
from streams.worker_main import ExitCode, guarded


def _raise(exc: Exception) -> None:
    raise exc


@pytest.mark.parametrize(("body", "code", "logged"), [
    (lambda: None, ExitCode.OK, None),
    (lambda: _raise(ValueError("patient said X")), ExitCode.FAILURE,
     "w worker failed: ValueError"),
])
def test_exit_statuses(caplog: pytest.LogCaptureFixture, body: object, code: ExitCode,
                       logged: str | None) -> None:
    with caplog.at_level(logging.DEBUG):
        assert guarded("w", body, cannot_start=(AgentsError,)) == code  # type: ignore[arg-type]
    errors = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == ([logged] if logged else [])


@pytest.mark.parametrize(("exc", "line"), [
    (SkillError("no criteria in /skill"), "w worker cannot start: no criteria in /skill"),
    (AgentsError("model retired"), "w worker cannot start: model retired"),
])
def test_a_worker_that_cannot_start_says_so_in_one_command_line_error(
        caplog: pytest.LogCaptureFixture, exc: Exception, line: str) -> None:
    """Not a log record: at JUDGEFLOW_LOG_LEVEL=CRITICAL that was dropped and the worker
    exited 2 without a word. The command line prints it (``judgeflow: ...``)."""
    with pytest.raises(CommandError) as err:
        guarded("w", lambda: _raise(exc), cannot_start=(AgentsError,))
    assert str(err.value) == line and err.value.code == ExitCode.CANNOT_START
    assert not [r for r in caplog.records if line in r.getMessage()]  # not also logged


def test_cannot_start_is_printed_at_critical(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    monkeypatch.setenv("JUDGEFLOW_SKILL_DIR", "/nope")
    assert main(["--log-level", "CRITICAL", "worker", "detect"]) == ExitCode.CANNOT_START
    err = capsys.readouterr().err
    assert err.startswith("judgeflow: detect worker cannot start: skill folder /nope"), err


def test_kafka_errors_go_up_to_the_command_line() -> None:
    with pytest.raises(KafkaConnectionError):
        guarded("w", lambda: _raise(KafkaConnectionError()))


def test_an_operator_mistake_found_at_start_goes_up_to_the_command_line() -> None:
    # the detect worker binds its metrics endpoint inside guarded(): an address in use must
    # still be one line and exit 2, not "detect worker failed: CommandError" and exit 1
    with pytest.raises(CommandError, match="metrics"):
        guarded("w", lambda: _raise(CommandError("cannot serve metrics on ...")))


def test_the_statuses_operations_documents() -> None:
    assert [int(c) for c in ExitCode] == [0, 1, 2, 3, 70, 130]

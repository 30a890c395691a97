"""The one map from errors to exit statuses and one-line messages for every command.

A command returns an :class:`~streams.exit_codes.ExitCode` or raises; :func:`exit_status`
turns whatever it raised into the status and the single line printed to stderr, using the
table :data:`ERRORS` (the first row whose type matches wins). A user mistake a command finds
itself is a :class:`~streams.exit_codes.CommandError` (in ``streams`` so that a command
kept in its feature's package, ``agents.replay.cli``, raises it too). Modelled on httpie's
``ExitStatus`` and ``raw_main``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping

from aiokafka.errors import KafkaConnectionError, KafkaError
from pydantic import ValidationError
from pydantic_settings import SettingsError

from agents.errors import AgentsError
from agents.settings import Settings
from schemas.errors import describe
from schemas.skill import SkillError
from streams.errors import StreamsError
from streams.exit_codes import CommandError, ExitCode
from streams.kafka_access import explain
from streams.kafka_settings import KafkaSettings
from streams.settings_env import describe_settings

#: The Kafka a command tried: its settings, or only an address before they were read.
Target = str | KafkaSettings


def _not_json(value: str) -> bool:
    try:
        json.loads(value)
    except ValueError:
        return True
    return False


def bad_json_variable(field: str, environ: Mapping[str, str]) -> str:
    """The variable behind a JSON error in settings field ``field``: pydantic-settings names
    only the top-level field (``llm``) although the value came from a nested variable
    (``JUDGEFLOW_LLM__CRITERION_MODELS``); the one that holds JSON that does not parse."""
    top = f"JUDGEFLOW_{field.upper()}"
    mine = sorted(n for n in environ if n.upper() == top or n.upper().startswith(top + "__"))
    looks_json = [n for n in mine if environ[n].lstrip()[:1] in ("{", "[")
                  and _not_json(environ[n])]
    return (looks_json or [n for n in mine if _not_json(environ[n])] or [top])[0].upper()


def _settings_error(exc: BaseException, _servers: Target) -> str:
    # pydantic-settings names the field, the JSON parser's own message the place
    field = re.search(r'field "([^"]+)"', str(exc))
    name = bad_json_variable(field.group(1), os.environ) if field else "a JUDGEFLOW_* variable"
    cause = f": {exc.__cause__}" if exc.__cause__ else ""
    return f"invalid configuration: {name} is not valid JSON{cause}"


def _invalid(exc: BaseException, _servers: Target) -> str:
    assert isinstance(exc, ValidationError)
    if exc.title == Settings.__name__:  # named as the operator sets it: the variable
        return f"invalid configuration: {describe_settings(exc, Settings)}"
    return f"invalid configuration: {describe(exc)}"


def _unreachable(_exc: BaseException, servers: Target) -> str:
    where = servers if isinstance(servers, str) else servers.bootstrap_servers
    return (f"cannot reach Kafka at {where} "
            "(set JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS or --bootstrap-servers)")


def _text(exc: BaseException, _servers: Target) -> str:
    return str(exc)


def _kafka(exc: BaseException, servers: Target) -> str:
    if isinstance(servers, KafkaSettings):  # a refused login or ACL: its cause and its fix
        return explain(exc, servers)
    return f"Kafka error: {type(exc).__name__}"


Message = Callable[[BaseException, Target], str]

#: (error types, exit status, the line after "judgeflow: "); the first match wins.
ERRORS: tuple[tuple[tuple[type[BaseException], ...], ExitCode, Message], ...] = (
    ((CommandError,), ExitCode.USAGE, _text),  # its own code: see exit_status
    ((SettingsError,), ExitCode.USAGE, _settings_error),
    ((ValidationError,), ExitCode.USAGE, _invalid),
    ((SkillError,), ExitCode.USAGE, _text),  # a missing, empty or wholly unusable skill folder
    ((AgentsError,), ExitCode.USAGE, _text),  # a model, provider or credentials to fix
    ((StreamsError,), ExitCode.FAILURE, _text),
    ((KafkaConnectionError,), ExitCode.FAILURE, _unreachable),
    ((KafkaError,), ExitCode.FAILURE, _kafka),
)


def exit_status(exc: BaseException, servers: Target) -> tuple[ExitCode, str] | None:
    """The status and one-line message for ``exc``; None when it is not ours to explain (a
    bug: the caller lets the traceback show). ``servers`` names the Kafka it tried: its
    settings once they were read, else the address given."""
    for types, code, message in ERRORS:
        if isinstance(exc, types):
            return (exc.code if isinstance(exc, CommandError) else code), message(exc, servers)
    return None

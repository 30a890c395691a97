"""Settings as the ``JUDGEFLOW_*`` environment that sets them (``judgeflow config``, child
processes started by the demo, benchmarks and tests)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from pydantic import BaseModel, SecretStr, ValidationError

from streams.settings import Settings

#: Settings fields that are dicts keyed by ids (case matters) and travel as one JSON value,
#: the form the docs tell users to set.
_JSON_FIELDS = ("EXPECTED_AGENTS_BY_TASK", "CRITERION_MODELS", "CHART_TOOLS__CRITERIA")
#: What a secret shows as when it is not revealed (``judgeflow config``).
HIDDEN = "<set, hidden>"
#: Secrets (SecretStr settings) by their environment name.
SECRETS = {"KAFKA__SASL_PASSWORD": ("kafka", "sasl_password"),
           "KAFKA__SSL_KEY_PASSWORD": ("kafka", "ssl_key_password"),
           "LLM__LOCAL_API_KEY": ("llm", "local_api_key")}


def settings_env(settings: Settings, *, reveal_secrets: bool = False) -> dict[str, str]:
    """The ``JUDGEFLOW_*`` environment that reproduces ``settings`` in a child process.
    Secrets show as :data:`HIDDEN` unless ``reveal_secrets`` (a child process needs them;
    a person reading ``judgeflow config`` never sees them)."""
    env: dict[str, str] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping):
            if prefix.endswith(_JSON_FIELDS):
                env[prefix] = orjson.dumps(value).decode()
                return
            for k, v in value.items():
                walk(f"{prefix}__{k.upper()}" if prefix else k.upper(), v)
        elif isinstance(value, list | tuple):
            env[prefix] = ",".join(str(v) for v in value)
        elif value is not None:
            env[prefix] = str(value)

    walk("", settings.model_dump(mode="json"))
    for name, (group, field) in SECRETS.items():
        secret = getattr(getattr(settings, group, None), field, None)  # llm: agents' only
        if isinstance(secret, SecretStr):
            env[name] = secret.get_secret_value() if reveal_secrets else HIDDEN
    return {f"JUDGEFLOW_{k}": v for k, v in env.items()}


def variable(model: type[BaseModel], loc: Sequence[int | str]) -> str | None:
    """The ``JUDGEFLOW_*`` variable that sets the field at ``loc`` (a validation error's
    location): a dict field travels as one JSON variable, so a key inside it names that
    variable. None when ``loc`` names a whole group (``kafka``): its checks name their
    variables themselves."""
    parts: list[str] = []
    group: type[BaseModel] | None = model
    for key in loc:
        field = group.model_fields.get(str(key)) if group is not None else None
        if field is None:
            break
        parts.append(str(key).upper())
        kind = field.annotation
        group = kind if isinstance(kind, type) and issubclass(kind, BaseModel) else None
        if group is None:
            break
    if not parts or group is not None:
        return None
    rest = loc[len(parts):]  # a key inside a JSON value: say which one
    inside = f" ({'.'.join(map(str, rest))})" if rest else ""
    return "JUDGEFLOW_" + "__".join(parts) + inside


def describe_settings(exc: ValidationError, model: type[BaseModel]) -> str:
    """A settings error in words, each problem after the variable to fix (never its value:
    errors are read without their input, which may be a secret)."""
    lines = []
    for error in exc.errors(include_input=False, include_url=False, include_context=False):
        why = error["msg"].removeprefix("Value error, ")
        name = variable(model, error["loc"])
        lines.append(f"{name}: {why}" if name else why)
    return "; ".join(lines)

"""Settings as the ``JUDGEFLOW_*`` environment that sets them (``judgeflow config``, child
processes started by the demo, benchmarks and tests)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from pydantic import SecretStr

from streams.settings import Settings

#: Settings fields that are dicts keyed by ids (case matters) and travel as one JSON value,
#: the form the docs tell users to set.
_JSON_FIELDS = ("EXPECTED_AGENTS_BY_TASK", "CRITERION_MODELS")
#: What a secret shows as when it is not revealed (``judgeflow config``).
HIDDEN = "<set, hidden>"
#: Secrets (SecretStr settings) by their environment name.
SECRETS = {"KAFKA__SASL_PASSWORD": ("kafka", "sasl_password"),
           "KAFKA__SSL_KEY_PASSWORD": ("kafka", "ssl_key_password")}


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
        secret = getattr(getattr(settings, group), field)
        if isinstance(secret, SecretStr):
            env[name] = secret.get_secret_value() if reveal_secrets else HIDDEN
    return {f"JUDGEFLOW_{k}": v for k, v in env.items()}

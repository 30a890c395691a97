"""Settings as the ``JUDGEFLOW_*`` environment that sets them (``judgeflow config``, child
processes started by the demo, benchmarks and tests)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from streams.settings import Settings

#: Settings fields that are dicts and travel as one JSON value.
_JSON_FIELDS = ("EXPECTED_AGENTS_BY_TASK",)


def settings_env(settings: Settings) -> dict[str, str]:
    """The ``JUDGEFLOW_*`` environment that reproduces ``settings`` in a child process."""
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
    return {f"JUDGEFLOW_{k}": v for k, v in env.items()}

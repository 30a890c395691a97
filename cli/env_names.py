"""The ``JUDGEFLOW_*`` names judgeflow reads, and the unknown ones in an environment.

pydantic-settings ignores a name no field reads, so a typo (``JUDGEFLOW_LLM__PROVDER``)
would silently leave the default in place; ``main()`` refuses to start with one instead and
names the nearest known variable.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import get_origin

from pydantic import BaseModel

from agents.settings import Settings
from dashboard.identity import KEY_ENV, REVIEWERS_ENV, TOKEN_ENV, USER_HEADER_ENV
from streams.logsafety import UNSAFE_ENV

PREFIX = "JUDGEFLOW_"
#: Read by docker compose, never by judgeflow: where the dashboard's TLS files are
#: (deploy/compose/compose.yaml). Accepted so that a shell exporting it can run judgeflow.
COMPOSE_ONLY = frozenset({"JUDGEFLOW_DASHBOARD_TLS_DIR"})
#: Names read outside Settings on purpose: a secret read by one command, the PHI escape
#: hatch read before logging starts, the bootstrap script's switch, compose's variables.
OUTSIDE_SETTINGS = frozenset({TOKEN_ENV, UNSAFE_ENV, "JUDGEFLOW_SKIP_SYSTEM_DEPS",
                              USER_HEADER_ENV, REVIEWERS_ENV, KEY_ENV}) | COMPOSE_ONLY
#: Names judgeflow once read and now ignores: accepted, with a warning saying why.
DEPRECATED = {"JUDGEFLOW_GROUPS__CALIBRATE": "the calibrate worker reads whole topics and "
              "joins no consumer group; remove it",
              "JUDGEFLOW_DETECT_CORE": "the compiled detect core is gone (the detector has "
              "one Python path); remove it"}
#: Prefixes left to the test suite and dev tools (``JUDGEFLOW_TEST_BROKER``, ...).
OUTSIDE_PREFIXES = ("JUDGEFLOW_TEST_",)


def setting_env_names(model: type[BaseModel] = Settings) -> tuple[set[str], tuple[str, ...]]:
    """Every name Settings reads, and the prefixes of dict-valued fields (``NAME__KEY``)."""
    names: set[str] = set()
    prefixes: list[str] = []

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, field in model.model_fields.items():
            env = f"{prefix}{name.upper()}"
            ann = field.annotation
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                walk(ann, env + "__")
                continue
            names.add(env)
            if get_origin(ann) is dict:
                prefixes.append(env + "__")

    walk(model, PREFIX)
    return names, tuple(prefixes)


def unknown(names: Iterable[str]) -> list[str]:
    """``NAME (did you mean KNOWN?)`` for each JUDGEFLOW_* name judgeflow does not read."""
    valid, dict_prefixes = setting_env_names()
    # compared without the shared prefix, which would make every name look alike
    known = sorted(n.removeprefix(PREFIX) for n in valid | OUTSIDE_SETTINGS)
    found = []
    for name in sorted(n.upper() for n in names):
        if (not name.startswith(PREFIX) or name in valid or name in OUTSIDE_SETTINGS
                or name in DEPRECATED
                or name.startswith(dict_prefixes + OUTSIDE_PREFIXES)):
            continue
        near = difflib.get_close_matches(name.removeprefix(PREFIX), known, n=1, cutoff=0.6)
        found.append(f"{name} (did you mean {PREFIX}{near[0]}?)" if near else name)
    return found


def deprecated(names: Iterable[str]) -> list[str]:
    """``NAME is ignored: why`` for each deprecated name in ``names``."""
    return [f"{n} is ignored: {DEPRECATED[n]}" for n in sorted(n.upper() for n in names)
            if n in DEPRECATED]

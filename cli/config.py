"""``judgeflow config``: show the effective configuration as the environment that sets it."""

from __future__ import annotations

import argparse

from streams.exit_codes import ExitCode
from streams.settings import Settings
from streams.settings_env import settings_env


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("config", help="print the effective configuration as JUDGEFLOW_* lines",
                       description="Print every setting as the JUDGEFLOW_* variable that sets "
                       "it, with its effective value (defaults, then the environment). "
                       "Secrets (ANTHROPIC_API_KEY, JUDGEFLOW_KAFKA__SASL_PASSWORD, "
                       "JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD) are never printed: a set one shows "
                       "as <set, hidden>.")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    for name, value in sorted(settings_env(settings).items()):
        print(f"{name}={value}")
    return ExitCode.OK

"""``judgeflow config``: show the effective configuration as the environment that sets it."""

from __future__ import annotations

import argparse
import os

from cli.env_names import setting_env_names
from streams.exit_codes import ExitCode
from streams.settings import Settings
from streams.settings_env import HIDDEN, settings_env

#: What a setting with no value (and no default) shows as, so that it can still be found.
UNSET = "<unset>"


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("config", help="print the effective configuration as JUDGEFLOW_* lines",
                       description="Print every setting as the JUDGEFLOW_* variable that sets "
                       "it, with its effective value (defaults, then the environment). A "
                       "setting with no value (optional ones such as "
                       "JUDGEFLOW_LLM__EFFORT or JUDGEFLOW_KAFKA__SASL_USERNAME) shows as "
                       "<unset>, so every setting can be found here; a map such as "
                       "JUDGEFLOW_LLM__CRITERION_MODELS prints as its JSON value ({} when "
                       "empty). Secrets (ANTHROPIC_API_KEY, "
                       "JUDGEFLOW_KAFKA__SASL_PASSWORD, JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD, "
                       "JUDGEFLOW_LLM__LOCAL_API_KEY) "
                       "are never printed: a set one shows as <set, hidden>, an unset one as "
                       "<unset>. Each setting is described in docs/configuration.md.")
    p.set_defaults(func=run)


def shown(settings: Settings) -> dict[str, str]:
    """Every setting's name and what ``judgeflow config`` prints for it."""
    lines = settings_env(settings)
    # read by the SDK, not a setting; shown so that "is the key there?" has an answer here
    lines["ANTHROPIC_API_KEY"] = HIDDEN if os.environ.get("ANTHROPIC_API_KEY") else UNSET
    names, _ = setting_env_names()
    for name in names:
        # a nested group's entries print as NAME__KEY...: the group itself is not unset
        if name not in lines and not any(n.startswith(name + "__") for n in lines):
            lines[name] = UNSET
    return lines


def run(args: argparse.Namespace, settings: Settings) -> int:
    for name, value in sorted(shown(settings).items()):
        print(f"{name}={value}")
    return ExitCode.OK

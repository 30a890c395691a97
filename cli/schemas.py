"""``judgeflow schemas generate|check``: the JSON Schemas under schemas/json, from the models."""

from __future__ import annotations

import argparse
import sys

from schemas.generate import JSON_DIR, check, generate
from streams.settings import Settings


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("schemas", help="generate or check schemas/json from the pydantic models")
    p.add_argument("action", choices=["generate", "check"])
    p.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.action == "generate":
        for path in generate(JSON_DIR):
            print(f"wrote {path}")
        return 0
    drift = check(JSON_DIR)
    for name in drift:
        print(f"drift: {name} differs from its model (run `judgeflow schemas generate`)",
              file=sys.stderr)
    return 1 if drift else 0

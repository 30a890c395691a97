"""``judgeflow schemas generate|check``: the JSON Schemas under schemas/json, from the models."""

from __future__ import annotations

import argparse
import sys

from schemas.generate import JSON_DIR, check, generate, render_all
from streams.exit_codes import ExitCode
from streams.settings import Settings


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("schemas", help="generate or check schemas/json from the pydantic models",
                       description="The JSON Schemas under schemas/json are generated from the "
                       "pydantic models (the contracts); keep them in step.")
    actions = p.add_subparsers(dest="action", metavar="ACTION", required=True)
    actions.add_parser("generate", help="write schemas/json from the models",
                       description="Write every JSON Schema under schemas/json from its "
                       "pydantic model (and the plugins' extra files).").set_defaults(func=run)
    actions.add_parser("check", help="fail if schemas/json differs from the models",
                       description="Compare schemas/json with what the models generate now. "
                       "Prints 'ok: N schemas match' and exits 0, or names each drifted file "
                       "and exits 1 (run `judgeflow schemas generate`).").set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.action == "generate":
        for path in generate(JSON_DIR):
            print(f"wrote {path}")
        return ExitCode.OK
    drift = check(JSON_DIR)
    for name in drift:
        print(f"drift: {name} differs from its model (run `judgeflow schemas generate`)",
              file=sys.stderr)
    if drift:
        return ExitCode.FAILURE
    print(f"ok: {len(render_all())} schemas match")
    return ExitCode.OK

"""``judgeflow bench``."""

from __future__ import annotations

import argparse

from streams.settings import Settings


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("bench", help="(not yet available)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace, settings: Settings) -> int:
    raise SystemExit("judgeflow bench: not yet available")

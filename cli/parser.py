"""The ``judgeflow`` argument parser: a mistake is one line with a hint, never a usage dump.

argparse prints the whole usage before its error; ours prints ``judgeflow CMD: error: ...``
and a pointer at ``--help``. An unknown option gets the nearest option of that command
(``demo --dashbaord``: did you mean ``--dashboard``?), and a global option written after the
command (``tail X --bootstrap-servers ...``) is told where it belongs.
"""

from __future__ import annotations

import argparse
import difflib
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")

    def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                   namespace: argparse.Namespace | None = None) -> argparse.Namespace:
        ns, extras = self.parse_known_args(args, namespace)
        if extras:  # said by the command's own parser: its --help is the one to read
            _command(self, ns).error(unrecognized(self, ns, extras))
        return ns


def _subparsers(parser: argparse.ArgumentParser) -> Iterator[argparse._SubParsersAction]:  # type: ignore[type-arg]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield action


def _options(parser: argparse.ArgumentParser) -> set[str]:
    """Every option string of ``parser`` and of the subcommands below it."""
    found = {o for a in parser._actions for o in a.option_strings if o.startswith("--")}
    for sub in _subparsers(parser):
        for child in set(sub.choices.values()):
            found |= _options(child)
    return found


def _command(top: argparse.ArgumentParser, ns: argparse.Namespace) -> argparse.ArgumentParser:
    """The innermost (sub)command ``ns`` chose (``replay judge``), else ``top``."""
    for sub in _subparsers(top):
        chosen: Any = sub.choices.get(getattr(ns, sub.dest, None) or "")
        if chosen is not None:
            return _command(chosen, ns)
    return top


def unrecognized(top: argparse.ArgumentParser, ns: argparse.Namespace,
                 extras: list[str]) -> str:
    """argparse's "unrecognized arguments" with the hint that fixes it."""
    message = f"unrecognized arguments: {' '.join(extras)}"
    top_level = {o for a in top._actions for o in a.option_strings if o.startswith("--")}
    command = _command(top, ns)
    for extra in extras:
        name = extra.split("=", 1)[0]
        if not name.startswith("--"):
            continue
        if name in top_level:
            return (f"{message}; {name} is a global option: put it before the command "
                    f"(judgeflow {name} ... {getattr(ns, 'command', 'COMMAND')} ...)")
        near = difflib.get_close_matches(name, sorted(_options(command) - top_level), n=1)
        if near:
            return f"{message}; did you mean {near[0]}?"
    return message

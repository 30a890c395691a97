"""docs/commands.md lists every command of ``judgeflow`` and every option its ``--help``
shows (a table row per command; options documented at length elsewhere name that page), and
the pages a ``--help`` refers to have the section it names. Built from the parser itself, so
a new command or option without its line fails here."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli.main import build_parser

ROOT = Path(__file__).resolve().parents[3]
DOC = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")

#: commands whose options are spelled out on another page, which the row links
ELSEWHERE = {"bench detect": "benchmarks.md", "bench judge": "benchmarks.md"}


def commands(p: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[
        tuple[str, list[str]]]:
    subs = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
    if path and not subs:
        yield " ".join(path), [o for a in p._actions for o in a.option_strings
                               if o.startswith("--") and o != "--help"]
    for sub in subs:
        for name, child in sub.choices.items():
            yield from commands(child, (*path, name))


LEAVES = list(commands(build_parser()))


def rows(command: str) -> list[str]:
    """The table rows whose first cell is this command (``replay judge\\|debrief`` too)."""
    words = command.split()
    found = []
    for line in DOC.splitlines():
        cell = re.match(r"\| `judgeflow ([^`]*)`", line)
        if not cell:
            continue
        given = cell.group(1).split()
        if given[0] == words[0] and (len(words) == 1 or (
                len(given) > 1 and words[1] in given[1].split("\\|"))):
            found.append(line)
    return found


@pytest.mark.parametrize(("command", "options"), LEAVES, ids=[c for c, _ in LEAVES])
def test_every_command_and_option_is_in_the_table(command: str, options: list[str]) -> None:
    found = rows(command)
    assert found, f"docs/commands.md has no row for `judgeflow {command}`"
    text = "\n".join(found)
    if command in ELSEWHERE:
        assert ELSEWHERE[command] in text
        text = (ROOT / "docs" / ELSEWHERE[command]).read_text(encoding="utf-8")
    missing = [o for o in options if not re.search(re.escape(o) + r"(?![\w-])", text)]
    assert not missing, f"`judgeflow {command}` options not in its docs: {missing}"


@pytest.mark.parametrize("kind", ["judge", "debrief"])
def test_replay_help_names_the_page_with_the_section(
        kind: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["replay", kind, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "see docs/replay.md, 'Changing the prompt'" in text
    assert "\n## Changing the prompt\n" in (ROOT / "docs" / "replay.md").read_text()

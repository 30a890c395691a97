"""``judgeflow replay judge|debrief`` accepts DESIGN's spelling ``--from-beginning`` (the
whole topic, the default), which excludes ``--since`` and ``--from-offsets``."""

from __future__ import annotations

import pytest

from cli.main import build_parser


@pytest.mark.parametrize("worker", ["judge", "debrief"])
def test_from_beginning_is_the_whole_topic(worker: str) -> None:
    args = build_parser().parse_args(["replay", worker, "--from-beginning", "--dry-run"])
    assert args.from_beginning and args.since is None and args.from_offsets is None


@pytest.mark.parametrize("other", [["--since", "2026-01-01"], ["--from-offsets", "0:5"]])
def test_from_beginning_excludes_a_range(other: list[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args(["replay", "judge", "--from-beginning", *other])
    assert exit_.value.code == 2

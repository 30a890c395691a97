"""The replay's progress line never shares a line with a log record, and the per-job
INFO lines stay out of the terminal unless DEBUG is asked for."""

from __future__ import annotations

import io
import logging

import pytest

from agents.replay.console import Console, replay_console


def _setup(level: int) -> tuple[io.StringIO, logging.Handler]:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(level)
    return out, handler


@pytest.mark.parametrize("level", [logging.INFO, logging.DEBUG])
def test_log_records_start_on_their_own_line(level: int) -> None:
    before = logging.getLogger().level
    out, handler = _setup(level)
    try:
        console = Console(out)

        def line(n: int) -> None:
            out.write(f"\rreplay: {n}/3 done")
        show = console.wrap(line)
        with replay_console(console):
            show(1)
            logging.getLogger("streams.runner").warning("broker slow")
            show(2)
            logging.getLogger("agents.judge.judge").info("judged abc kind=x")
            show(3)
        console.end()
    finally:
        logging.getLogger().removeHandler(handler)
        logging.getLogger().setLevel(before)
    text = out.getvalue()
    assert "\rreplay: 1/3 done\nWARNING streams.runner: broker slow\n" in text
    assert text.endswith("\rreplay: 3/3 done\n")
    assert ("DEBUG agents.judge.judge: judged abc" in text) == (level == logging.DEBUG)
    assert "INFO agents.judge.judge" not in text
    logging.getLogger("agents.judge.judge").info("after the replay")  # filters removed
    assert not logging.getLogger("agents.judge.judge").filters

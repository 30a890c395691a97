"""The terminal during ``judgeflow replay judge|debrief``: one progress line that log
records never share (the line is ended before a record is written), and the per-result
log lines (one per job) kept at DEBUG so they do not flood the terminal at INFO."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any, TextIO

#: loggers that write one line per job at INFO (the live worker's view); DEBUG in a replay
PER_RESULT = ("agents.judge.judge", "agents.judge.run", "agents.debrief.handler")


class Console:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.open = False  # a progress line is on the screen, not ended yet

    def wrap(self, show: Callable[..., None]) -> Callable[..., None]:
        """``show`` (which writes ``\\r...``), remembering that the line is open."""
        def progress(*args: Any) -> None:
            show(*args)
            self.open = True
        return progress

    def end(self) -> None:
        if self.open:
            self.stream.write("\n")
            self.stream.flush()
            self.open = False

    def filter(self, record: logging.LogRecord) -> bool:  # a handler filter: end the line
        self.end()
        return True


def demote(record: logging.LogRecord) -> bool:
    """A per-result INFO line becomes DEBUG (shown only with --log-level DEBUG)."""
    if record.levelno == logging.INFO:
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return logging.getLogger().isEnabledFor(logging.DEBUG)
    return True


@contextlib.contextmanager
def replay_console(console: Console) -> Iterator[Console]:
    handlers = list(logging.getLogger().handlers)
    loggers = [logging.getLogger(name) for name in PER_RESULT]
    for h in handlers:
        h.addFilter(console.filter)
    for lg in loggers:
        lg.addFilter(demote)
    try:
        yield console
    finally:
        for h in handlers:
            h.removeFilter(console.filter)
        for lg in loggers:
            lg.removeFilter(demote)

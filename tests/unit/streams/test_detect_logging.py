"""The detector's Faust worker replaces the root log handlers that main() guarded (issue 25):
its DEBUG tracebacks (``detect failure traceback``) must still withhold exception text."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from mode.utils import logging as mode_logging

from streams.detect.run import QuietWorker
from streams.logsafety import WITHHELD, PhiLoggerFilter

MARK = "zqphimark"


@pytest.fixture()
def faust_logging() -> Iterator[tuple[io.StringIO, list[logging.Handler]]]:
    """Logging as Faust's worker sets it up at DEBUG (root handlers replaced), restored;
    the buffer its handler writes to, and the handlers it installed (pytest adds its own
    to the root while a test runs: those are not Faust's)."""
    root = logging.getLogger()
    saved = root.level, list(root.handlers)
    buf = io.StringIO()
    mode_logging.setup_logging(loglevel="DEBUG", logfile=buf)
    installed = list(root.handlers)
    for handler in installed:  # Faust's handler writes to stderr: read it here
        if isinstance(handler, logging.StreamHandler):
            handler.setStream(buf)
    yield buf, installed
    root.handlers[:] = saved[1]
    root.setLevel(saved[0])


def test_the_worker_guards_the_handlers_faust_installs(
        faust_logging: tuple[io.StringIO, list[logging.Handler]]) -> None:
    buf, installed = faust_logging
    assert installed and not any(isinstance(f, PhiLoggerFilter) for h in installed
                                 for f in h.filters)  # what Faust leaves: no guard
    worker = SimpleNamespace(judgeflow_log_format="text")
    QuietWorker.on_setup_root_logger(worker, logging.getLogger(),  # type: ignore[arg-type]
                                     logging.DEBUG)
    log = logging.getLogger("streams.detect.faust_edge")
    try:
        raise ValueError(f"answer {MARK} is not a date")
    except ValueError:
        log.debug("detect failure traceback", exc_info=True)
    logging.getLogger("httpcore2.http11").debug("response headers %s", MARK)
    assert all(any(isinstance(f, PhiLoggerFilter) for f in h.filters) for h in installed)
    text = buf.getvalue()
    assert "detect failure traceback" in text and "ValueError" in text and WITHHELD in text
    assert MARK not in text

"""A child for test_subproc: on SIGTERM it marks ``DIR/<name>.got`` and waits (at most 10 s)
until every sibling has its mark, then writes whether they all had it."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

directory, name, siblings = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])


def on_term(*_: object) -> None:
    (directory / f"{name}.got").touch()
    deadline = time.monotonic() + 10
    while len(list(directory.glob("*.got"))) < siblings and time.monotonic() < deadline:
        time.sleep(0.01)  # waiting for the siblings' marks
    together = len(list(directory.glob("*.got"))) == siblings
    (directory / f"{name}.done").write_text("together" if together else "alone")
    sys.exit(0)


signal.signal(signal.SIGTERM, on_term)
(directory / f"{name}.ready").touch()
while True:
    signal.pause()

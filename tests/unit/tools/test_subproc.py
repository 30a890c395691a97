"""tools/subproc.py: stop_all signals every process before it waits for any (the demo's
Ctrl-C stops its workers side by side)."""

from __future__ import annotations

import time
from pathlib import Path

from streams.settings import Settings
from tools.subproc import WorkerProcess, stop_all


def test_stop_all_signals_every_process_before_waiting(tmp_path: Path) -> None:
    n = 3
    procs = [WorkerProcess(f"p{i}", Settings(), tmp_path / f"p{i}.log",
                           module_args=("tests.unit.tools.sigterm_child", str(tmp_path),
                                        f"p{i}", str(n)))
             for i in range(n)]
    deadline = time.monotonic() + 30
    while len(list(tmp_path.glob("*.ready"))) < n and time.monotonic() < deadline:
        time.sleep(0.01)  # waiting for the children to install their handlers
    stop_all(procs)
    assert all(not p.alive for p in procs)
    # one after another, the first child would have waited for siblings never signalled
    assert [(tmp_path / f"p{i}.done").read_text() for i in range(n)] == ["together"] * n

"""``judgeflow demo`` as a user runs it: one command, a summary, exit 0, nothing left behind."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration


def test_demo_runs_the_whole_pipeline_offline() -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JUDGEFLOW_", "ANTHROPIC_"))}
    proc = subprocess.run([sys.executable, "-m", "streams.cli.main", "demo", "--timeout", "240"],
                          env=env, capture_output=True, text=True, timeout=300)
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:] + proc.stderr[-3000:]
    assert "LLM provider: offline" in out
    assert "ground truth: 425/425 cells match" in out
    assert re.search(r"complete: cells decided 425/425, judge jobs (\d+), judge results \1/\1, "
                     r"evaluations 11/11, dead letters 8", out)
    assert "Judge results (97)" in out
    assert "Debrief evaluations (11)" in out
    assert out.count("safety breach: yes") == 5
    # everything the demo started is gone: no broker or worker still using its directory
    work = re.search(r"logs in (\S+)\)", out)
    assert work is not None
    left = subprocess.run(["pgrep", "-f", work.group(1)], capture_output=True, text=True)
    assert left.stdout.strip() == "", f"processes left running: {left.stdout}"

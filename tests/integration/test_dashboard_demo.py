"""``judgeflow demo --dashboard``: the page stays up over the demo's topics after the summary,
serves every judge result, and Ctrl-C stops the page and the broker (exit 0)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def test_demo_dashboard_keeps_the_page_until_ctrl_c(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JUDGEFLOW_", "ANTHROPIC_"))}
    out_path = tmp_path / "demo.out"
    with out_path.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cli.main", "demo", "--timeout", "240", "--keep-logs",
             "--dashboard", "--dashboard-port", "0"],
            env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        url = None
        while url is None and time.monotonic() < deadline and proc.poll() is None:
            found = re.search(r"the review page is at (http://\S+/)", out_path.read_text())
            url = found.group(1) if found else None
            time.sleep(0.2)  # polling the child's output for its URL line
        assert url is not None, out_path.read_text()[-3000:]
        text = out_path.read_text()
        judged = re.search(r"Judge results \((\d+)\)", text)
        assert judged is not None
        deadline = time.monotonic() + 60
        rows: list[object] = []
        while time.monotonic() < deadline:
            with urllib.request.urlopen(url + "api/rows", timeout=10) as resp:
                rows = json.load(resp)["rows"]
            if len(rows) >= int(judged.group(1)):
                break
            time.sleep(0.2)  # the page reads the topics from their beginning
        assert len(rows) == int(judged.group(1))
        assert proc.poll() is None  # still serving after the summary
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    work = re.search(r"logs in (\S+)\)", out_path.read_text())
    assert work is not None
    left = subprocess.run(["pgrep", "-f", work.group(1)], capture_output=True, text=True)
    assert left.stdout.strip() == "", f"processes left running: {left.stdout}"
    shutil.rmtree(work.group(1), ignore_errors=True)  # kept by --keep-logs

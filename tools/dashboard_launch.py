"""Start ``judgeflow dashboard`` as a child process and learn its URL (demo, tests, bench)."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from dashboard.identity import add_reviewer
from streams.settings import Settings
from tools.subproc import WorkerProcess

URL = re.compile(rb"judgeflow dashboard: (http://\S+/)")


def start_dashboard(settings: Settings, log_path: Path, args: Sequence[str] = (),
                    extra_env: Mapping[str, str] | None = None,
                    timeout: float = 60.0) -> tuple[WorkerProcess, str]:
    """The process and the URL it printed; raises RuntimeError if it never listens."""
    proc = WorkerProcess("dashboard", settings, log_path, extra_env,
                         module_args=("cli.main", "dashboard", *args))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = URL.search(log_path.read_bytes()) if log_path.exists() else None
        if found:
            return proc, found.group(1).decode()
        if not proc.alive:
            break
        time.sleep(0.05)  # polling a child's log file for its first line
    proc.kill()
    tail = log_path.read_text(errors="replace")[-2000:] if log_path.exists() else ""
    raise RuntimeError(f"the dashboard did not start:\n{tail}")


#: The demo's reviewers: names of the demo's own reviewers file (their ids are pseudonyms);
#: the second one takes the second review of double-review cells (issue 27).
DEMO_REVIEWER = "demo-reviewer"
DEMO_REVIEWER_2 = "demo-reviewer-2"


def hold_open(settings: Settings, work: Path, port: int, out: TextIO) -> None:
    """``judgeflow demo --dashboard``: serve the page over the demo's topics until Ctrl-C,
    on loopback, with one reviewer whose random token exists only in this run (its hash in
    the work directory's reviewers file); the sign-in link is printed once."""
    reviewers = work / "reviewers.txt"
    token = add_reviewer(reviewers, DEMO_REVIEWER)
    token2 = add_reviewer(reviewers, DEMO_REVIEWER_2)
    try:
        proc, url = start_dashboard(settings, work / "dashboard.log",
                                    ["--port", str(port), "--from-beginning",
                                     "--reviewers", str(reviewers)])
    except RuntimeError as exc:
        print(f"\njudgeflow demo: {exc}", file=out, flush=True)
        return
    print(f"\njudgeflow demo: the review page is at {url}\n"
          f"  sign in as {DEMO_REVIEWER} (this link works until Ctrl-C): "
          f"{url}auth?token={token}\n"
          f"  a second reviewer for the double-review cells (another browser or a private "
          f"window): {url}auth?token={token2}\n"
          "  Some cells are blind: the judge's answer shows once your decision is saved.\n"
          "  The calibrate worker keeps running: decide a pending cell and watch "
          "#calibration move.\n"
          "  Ctrl-C stops the page, the workers and the broker.", file=out, flush=True)
    try:
        proc.proc.wait()
    except KeyboardInterrupt:
        print("\njudgeflow demo: stopping", file=out, flush=True)
    finally:
        proc.stop()

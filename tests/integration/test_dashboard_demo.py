"""``judgeflow demo --dashboard``: the page stays up over the demo's topics after the summary,
serves every judge result, leaves a usable reviewer loop (pending cells, a demo reviewer
signed in by the printed link, the calibrate worker still running: a decision moves the
calibration), and Ctrl-C stops the page and the broker (exit 0)."""

from __future__ import annotations

import http.cookiejar
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


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_demo_dashboard_keeps_the_page_until_ctrl_c(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JUDGEFLOW_", "ANTHROPIC_"))}
    out_path = tmp_path / "demo.out"
    with out_path.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cli.main", "demo", "--timeout", "240", "--keep-logs",
             "--dashboard", "--dashboard-port", "0"],
            env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            # Ctrl-C as a terminal delivers it: a suite started in the background by a
            # non-interactive shell inherits SIGINT ignored, and Python then installs no
            # KeyboardInterrupt handler (the demo never saw the signal: 2 CI failures)
            preexec_fn=_default_sigint)
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
        browser, jar = signed_in(text)
        deadline = time.monotonic() + 60
        rows: list[object] = []
        while time.monotonic() < deadline:
            with browser.open(url + "api/rows", timeout=10) as resp:
                rows = json.load(resp)["rows"]
            if len(rows) >= int(judged.group(1)):
                break
            time.sleep(0.2)  # the page reads the topics from their beginning
        assert len(rows) == int(judged.group(1))
        assert proc.poll() is None  # still serving after the summary
        audit_shown(text, url, browser)
        reviewer_loop(url, browser, jar)
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


def signed_in(text: str) -> tuple[urllib.request.OpenerDirector, http.cookiejar.CookieJar]:
    """A client signed in by the sign-in link the demo printed (the page is closed to
    anonymous readers once it has a reviewer)."""
    link = re.search(r"sign in as demo-reviewer .*?: (http://\S+/auth\?token=\S+)", text)
    assert link is not None, text[-2000:]
    jar = http.cookiejar.CookieJar()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    browser.open(link.group(1), timeout=10).close()
    return browser, jar


def audit_shown(text: str, url: str, browser: urllib.request.OpenerDirector) -> None:
    """Issue 27: the summary has the blind/verify split and the human baseline with
    intervals, the page has blind and double-reviewed cells, and a second reviewer link."""
    assert "Blind audit and the human baseline" in text
    pooled = re.search(r"all criteria, pooled: judge vs reviewer on blind cells (\d+)/(\d+) "
                       r"\d+% \[\d+%, \d+%\], on verify cells \d+/\d+ .*; reviewer vs "
                       r"reviewer (\d+)/(\d+) \d+% \[", text)
    assert pooled is not None, text[-3000:]
    assert int(pooled.group(2)) > 0 and int(pooled.group(4)) > 0
    assert re.search(r"a second reviewer .*: http://\S+/auth\?token=\S+", text)
    with browser.open(url + "api/progress", timeout=10) as resp:
        progress = json.load(resp)
    assert sum(c["blind"] for c in progress["criteria"]) > 0
    assert sum(c["double_done"] for c in progress["criteria"]) > 0
    assert {"synthetic-reviewer-1", "synthetic-reviewer-2"} <= {
        r["reviewer"] for r in progress["reviewers"]}


def reviewer_loop(url: str, browser: urllib.request.OpenerDirector,
                  jar: http.cookiejar.CookieJar) -> None:
    """Pending cells are there, the demo reviewer may decide one, calibration moves."""
    def get(path: str) -> dict:
        with browser.open(url + path, timeout=10) as resp:
            return json.load(resp)
    me = get("api/me")
    assert me["name"] == "demo-reviewer" and me["reviewer"].startswith("rv-")
    queue = get("api/queue")
    assert queue["total"] > 0, queue  # the demo held back part of the adjudications
    top = next(i for i in queue["items"] if i["suggested_answer"] is not None)
    group = (top["task_id"], top["field_id"], top["prompt_version"])

    def adjudicated() -> int:
        return sum(int(r["n"] or 0) for r in get("api/stats")["calibration"]
                   if (r["task_id"], r["field_id"], r["prompt_version"]) == group)
    before = adjudicated()
    csrf = next(c.value for c in jar if c.name == "judgeflow_csrf")
    save = urllib.request.Request(url + "api/adjudications", method="POST", data=json.dumps({
        "result_id": top["result_id"], "final_answer": top["suggested_answer"],
        "classification": top["classification_hint"] or "n_a"}).encode(), headers={
        "Content-Type": "application/json", "Origin": url.rstrip("/"), "X-CSRF-Token": csrf})
    with browser.open(save, timeout=30) as resp:
        assert resp.status == 201
    deadline = time.monotonic() + 60
    while adjudicated() == before and time.monotonic() < deadline:
        time.sleep(0.3)  # the calibrate worker publishes within its commit interval
    assert adjudicated() == before + 1
    assert get("api/queue")["total"] == queue["total"] - 1

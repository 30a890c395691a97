"""``judgeflow demo`` as a user runs it: one command, a summary, exit 0, nothing left behind."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.unit.agents.debrief.support import attending, is_debrief
from tools.fakes.fake_anthropic import FakeAnthropic, Reply

pytestmark = pytest.mark.integration
README = Path(__file__).resolve().parents[2] / "README.md"


def _masked(line: str) -> str:
    """A summary line without what changes between runs or prompts: the port, the version,
    where --keep-logs kept the logs."""
    line = re.sub(r" \(logs in \S+\)$| Worker logs: \S+$", "", line.rstrip())
    line = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", line)
    return re.sub(r"\+[0-9a-f]{12}\b", "+HASH", line)


def readme_demo_lines() -> list[str]:
    block = README.read_text(encoding="utf-8").split("```text\n", 1)[1].split("```", 1)[0]
    return [_masked(line) for line in block.splitlines()]


def test_demo_runs_the_whole_pipeline_offline() -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JUDGEFLOW_", "ANTHROPIC_"))}
    proc = subprocess.run([sys.executable, "-m", "cli.main", "demo", "--timeout", "240",
                           "--keep-logs"], env=env, capture_output=True, text=True, timeout=300)
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:] + proc.stderr[-3000:]
    assert "LLM provider: offline" in out
    assert "ground truth: 425/425 cells match" in out
    assert re.search(r"complete: cells decided 425/425, judge jobs (\d+), judge results \1/\1, "
                     r"evaluations 11/11, dead letters 8", out)
    assert "Judge results (97)" in out
    assert "Debrief evaluations (11)" in out
    assert out.count("safety breach: yes") == 5
    printed = {_masked(line) for line in (out + proc.stderr).splitlines()}
    shown = readme_demo_lines()  # the README's ten lines are lines the demo prints
    assert len(shown) == 10 and [line for line in shown if line not in printed] == []
    # everything the demo started is gone: no broker or worker still using its directory
    work = re.search(r"logs in (\S+)\)", out)
    assert work is not None
    left = subprocess.run(["pgrep", "-f", work.group(1)], capture_output=True, text=True)
    assert left.stdout.strip() == "", f"processes left running: {left.stdout}"
    # --keep-logs: the worker logs stay (the broker's data does not); tidy up after ourselves
    kept = Path(work.group(1))
    assert (kept / "detect.log").is_file() and not (kept / "broker").exists()
    shutil.rmtree(kept)


def _claude(body: dict[str, Any]) -> Reply:
    """Answer like Claude would: a case evaluation for debriefs, a JudgeAnalysis for cells."""
    if is_debrief(body):  # the tool or the structured-outputs path
        return attending(body)
    return Reply.message(text=json.dumps({
        "suggested_answer": None, "reasoning": "The notes support neither answer clearly.",
        "evidence_pointers": [], "agent_correctness": "n_a",
        "classification_hint": "true_ambiguity", "judge_confidence": "low"}),
        input_tokens=3000, output_tokens=120, cache_read=1500)


def test_demo_uses_claude_when_the_api_key_is_set() -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JUDGEFLOW_", "ANTHROPIC_"))}
    with FakeAnthropic(responder=_claude) as fake:
        env.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake.base_url,
                   JUDGEFLOW_LLM__REQUESTS_PER_MINUTE="6000")  # the fake has no rate limit
        proc = subprocess.run([sys.executable, "-m", "cli.main", "demo",
                               "--timeout", "240"], env=env, capture_output=True, text=True,
                              timeout=300)
        requests = fake.message_requests()
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:] + proc.stderr[-3000:]
    assert "LLM provider: anthropic" in out
    assert "logs in" not in out and "Worker logs" not in out  # removed: no path to show
    assert "Judge results (97)" in out and "Debrief evaluations (11)" in out
    # type drift (25 jobs) never calls the model; every other job is one call; 11 debriefs
    judge_calls = [r for r in requests if not is_debrief(r.body)]
    assert len(judge_calls) == 97 - 25
    assert len(requests) - len(judge_calls) == 11
    assert all("test-key" in (r.headers.get("Authorization", "") + r.headers.get("x-api-key", ""))
               for r in requests)  # the key from the environment reaches the API
    calls = re.search(r"LLM calls (\d+); cost \$(\d+\.\d+)", out)
    assert calls is not None and int(calls.group(1)) == 72 and float(calls.group(2)) > 0


def test_demo_stops_when_a_worker_dies_and_says_why() -> None:
    """JUDGEFLOW_SKILL_DIR=/nope: the workers cannot start; the demo says so at once instead
    of printing progress until its timeout."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JUDGEFLOW_", "ANTHROPIC_"))}
    env["JUDGEFLOW_SKILL_DIR"] = "/nope"
    proc = subprocess.run([sys.executable, "-m", "cli.main", "demo", "--timeout", "240"],
                          env=env, capture_output=True, text=True, timeout=200)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    # the reason is one `judgeflow:` line on stderr (the one error map), not on stdout
    stopped = re.search(r"^judgeflow: demo: stopped after (\d+)s: (.*)$", proc.stderr, re.M)
    assert stopped is not None, proc.stderr[-3000:]
    assert "stopped after" not in proc.stdout
    assert [line for line in proc.stderr.splitlines() if line.startswith("judgeflow")] == [
        stopped.group(0)]  # one line: it names the kept worker logs itself
    assert int(stopped.group(1)) < 120
    assert "worker exited with status 2: " in stopped.group(2)
    assert "cannot start: skill folder /nope does not exist" in stopped.group(2)
    assert "Traceback" not in proc.stdout + proc.stderr

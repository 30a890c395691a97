"""Foreign skill folders with real processes: the detect worker on a real broker with a
folder written by another team (one file broken), and the start-up errors of a worker whose
skill folder is missing or empty."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson
import pytest

from agents.settings import Settings
from schemas.dlq import DeadLetterHeaders
from streams.topics import ensure_topics
from tests.helpers import collect, produce, settings_env, test_settings, values, worker

pytestmark = pytest.mark.integration
CLI = [sys.executable, "-m", "cli.main"]
FOREIGN = Path(__file__).resolve().parents[1] / "data" / "skills"


def answer(patient: str, field: str, agent: str, value: Any) -> tuple[bytes, bytes]:
    rec = {"event_id": f"{patient}-{field}-{agent}", "run_id": "r1", "task_id": "hf-study",
           "patient_id": patient, "field_id": field, "agent_id": agent, "answer": value,
           "confidence": "high", "emitted_at": "2026-01-01T00:00:00Z"}
    return f"hf-study|{patient}|{field}".encode(), orjson.dumps(rec)


def test_detect_runs_a_foreign_folder_and_dead_letters_the_broken_criterion(
        bootstrap: str, tmp_path: Path) -> None:
    s = test_settings(bootstrap, skill_dir=FOREIGN / "cardio_json")
    asyncio.run(ensure_topics(s))
    records = [
        answer("P1", "hf_dx", "default", True), answer("P1", "hf_dx", "skeptical", "yes"),
        answer("P1", "hf_meds", "default", ["Sacubitril", "bisoprolol"]),
        answer("P1", "hf_meds", "skeptical", ["bisoprolol", "sacubitril"]),
        answer("P2", "hf_meds", "default", ["furosemide"]),
        answer("P2", "hf_meds", "skeptical", ["furosemide", "spironolactone"]),
        answer("P1", "nyha_class", "default", "II"),
    ]
    with worker("detect", s, tmp_path) as w:
        asyncio.run(produce(bootstrap, s.topics.agent_answers, records))
        outcomes = values(asyncio.run(collect(bootstrap, s.topics.cell_outcomes, until=3,
                                              timeout=90)))
        dlq = asyncio.run(collect(bootstrap, s.topics.dlq(s.topics.agent_answers), until=1,
                                  timeout=30))
        assert w.alive, w.log_text()[-3000:]
        log = w.log_text()
    got = {(o["patient_id"], o["field_id"]): o["outcome"] for o in outcomes}
    assert got == {("P1", "hf_dx"): "type_drift", ("P1", "hf_meds"): "type_drift",
                   ("P2", "hf_meds"): "disagreement"}
    assert [r.value for r in dlq] == [records[-1][1]]
    header = DeadLetterHeaders.from_kafka(dlq[0].headers)
    assert header.error_type == "unknown_criterion"
    assert "nyha_class.json" in header.error_message and "invalid JSON" in header.error_message
    broken = [line for line in log.splitlines() if "nyha_class.json" in line]
    assert len(broken) == 1 and "ERROR" in broken[0], broken
    assert "Traceback" not in log


def run_worker(s: Settings, skill_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUDGEFLOW_")}
    env.update(settings_env(s))
    env["JUDGEFLOW_SKILL_DIR"] = str(skill_dir)
    return subprocess.run([*CLI, "worker", "detect"], capture_output=True, text=True, env=env,
                          timeout=60)


@pytest.mark.parametrize("layout", ["missing", "empty", "no_files"])
def test_worker_with_missing_or_empty_skill_exits_2_in_one_line(tmp_path: Path,
                                                                 layout: str) -> None:
    root = tmp_path / "skill"
    if layout != "missing":
        (root / ("references/criteria" if layout == "no_files" else "")).mkdir(parents=True)
    # no broker needed: the skill folder is read before Kafka is touched
    proc = run_worker(test_settings("127.0.0.1:9"), root)
    assert proc.returncode == 2, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert str(root) in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("command", ["skill", "skill check"])
def test_skill_command_has_help(command: str) -> None:
    proc = subprocess.run([*CLI, *command.split(), "--help"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "usage: judgeflow" in proc.stdout

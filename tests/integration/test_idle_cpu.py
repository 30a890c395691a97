"""An idle worker on the embedded broker must not burn a core (noida-db ignores Fetch
max-wait; streams.fetch_backoff pauses after empty fetches on the embedded path)."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import orjson
import pytest

from streams.topics import ensure_topics
from tests.helpers import collect, produce, test_settings, worker

# Also on the embedded broker, whose ignored Fetch max-wait streams/fetch_backoff.py answers.
pytestmark = [pytest.mark.integration, pytest.mark.brokers("embedded", "apache")]
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def test_idle_detect_worker_does_not_spin(bootstrap: str, tmp_path: Path) -> None:
    s = test_settings(bootstrap, settle_seconds=60.0)
    asyncio.run(ensure_topics(s))
    answer = {"event_id": "e1", "run_id": "r1", "task_id": "t2dm-ckd-v1", "patient_id": "P001",
              "field_id": "t2dm_dx", "agent_id": "default", "answer": True,
              "emitted_at": "2026-01-01T00:00:00Z"}
    with worker("detect", s, tmp_path) as w:
        # one record in, one back out through the changelog: the worker is up and idle
        asyncio.run(produce(bootstrap, s.topics.agent_answers,
                            [(b"t2dm-ckd-v1|P001|t2dm_dx", orjson.dumps(answer))]))
        changelog = f"{s.groups.detect}-cells-changelog"
        assert asyncio.run(collect(bootstrap, changelog, until=1, timeout=60, quiet=0))
        time.sleep(2.0)
        before, t0 = cpu_seconds(w.proc.pid), time.monotonic()
        time.sleep(4.0)
        share = (cpu_seconds(w.proc.pid) - before) / (time.monotonic() - t0)
        assert w.alive, w.log_text()[-2000:]
    # without the idle backoff this is ~0.9 (a whole core); with it, a few percent
    assert share < 0.3, f"idle worker used {share:.0%} of a core"

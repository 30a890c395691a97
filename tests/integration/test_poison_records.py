"""Poison records on every input topic (issue 8): a near-1 MiB record and an answer whose
rationale makes the cell state too big for the changelog. Each worker stays alive, puts the
record in its DLQ once (a truncated copy with the original size when it cannot fit), commits
past it once, and goes on with the records behind it (the cases: tests/integration/oversized.py,
shared with the 5 MiB run on Apache Kafka)."""

from __future__ import annotations

from pathlib import Path

import pytest

from streams.topics import ensure_topics
from tests.helpers import collect, produce, worker
from tests.helpers import test_settings as make_settings
from tests.integration.oversized import CASES, check_dlq, padded
from tests.integration.sample import load_sample

pytestmark = pytest.mark.integration

#: Just under the producer's 1 MiB request limit: the record itself can be produced, but a
#: copy of it plus dead-letter headers cannot.
NEAR_1MIB = 1024 * 1024 - 200


@pytest.mark.parametrize("role", list(CASES))
async def test_each_worker_dead_letters_a_near_1mib_record(bootstrap: str, tmp_path: Path,
                                                          role: str) -> None:
    await CASES[role](bootstrap, tmp_path, NEAR_1MIB, produce)


async def test_detect_survives_an_answer_too_big_for_the_cell_state(
        bootstrap: str, tmp_path: Path) -> None:
    """A valid answer with a 700 KB rationale: once its cell is decided, the state (answer
    plus the job that quotes it) would exceed the changelog's record limit."""
    sample = load_sample()
    s = make_settings(bootstrap)
    await ensure_topics(s)
    key, value = sample.answers[0]
    big = padded(value, "rationale", 700_000)
    with worker("detect", s, tmp_path) as w:
        await produce(bootstrap, s.topics.agent_answers, [(key, big), sample.answers[1]])
        await check_dlq(s, s.topics.agent_answers, s.groups.detect, big, w.log_text())
        out = await collect(bootstrap, s.topics.cell_outcomes, until=1, timeout=60, quiet=0.5)
        jobs = await collect(bootstrap, s.topics.judge_jobs, timeout=3, quiet=0.5)
        assert out, w.log_text()[-3000:]
        assert w.alive, w.log_text()[-3000:]
        assert "exit" not in w.log_text().lower() or w.alive
    assert all(len(r.value) < 200_000 for r in jobs)

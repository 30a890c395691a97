"""`judgeflow worker calibrate` on a real broker: the published figures equal the
hand calculation of tests/unit/agents/calibrate/scenario.py; an adjudication of a task no
decided cell names is dead-lettered (``unknown_task``, also when it was read before the
outcomes); a restart publishes nothing new and dead-letters nothing twice; a new
adjudication republishes the group it changes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest

from agents.settings import Settings
from schemas.dlq import DeadLetterHeaders
from streams.topics import ensure_topics
from tests.helpers import collect, produce, values, worker
from tests.helpers import test_settings as make_settings
from tests.unit.agents.calibrate import scenario as sc

pytestmark = pytest.mark.integration


def _keyed(records: list[Any]) -> list[tuple[bytes, bytes]]:
    return [(r.key.encode(), orjson.dumps(r.model_dump(mode="json"))) for r in records]


async def load_scenario(bootstrap: str, settings: Settings, bad: bytes | None = None) -> None:
    t = settings.topics
    await ensure_topics(settings)
    await produce(bootstrap, t.judge_results, _keyed(sc.results()))
    adjs = _keyed(sc.adjudications())
    stray = sc.adjudication("c2", "no", "agent_b_error", "agent_a", minute=30).model_copy(
        update={"task_id": "no-such-task"})
    await produce(bootstrap, t.adjudications,
                  adjs + ([(b"T|x|f", bad), *_keyed([stray])] if bad else []))
    await produce(bootstrap, t.cell_outcomes, _keyed(sc.outcomes()))


def latest(records: list[Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for rec in values(records):
        out[rec["prompt_version"]] = rec
    return out


def _has_both(records: list[Any]) -> bool:
    return set(latest(records)) == {"v1", "v2"}


async def test_worker_publishes_the_hand_calculated_figures(bootstrap: str,
                                                            tmp_path: Path) -> None:
    # the scenario's criterion "f" is in no skill: without one, criteria are not checked
    settings = make_settings(bootstrap, skill_dir=tmp_path / "no-skill")
    topic, dlq = settings.topics.calibration, settings.topics.dlq(settings.topics.adjudications)
    await load_scenario(bootstrap, settings, bad=b'{"task_id": "T"}')
    with worker("calibrate", settings, tmp_path, tag="-1") as proc:
        first = await collect(bootstrap, topic, done=_has_both, timeout=40, quiet=1.5)
        assert _has_both(first), proc.log_text()[-2000:]
    v1, v2 = latest(first)["v1"], latest(first)["v2"]
    assert len(first) == 2  # one record per group, nothing republished while unchanged
    assert (v1["cells_judged"], v1["cells_adjudicated"]) == (5, 4)
    # Wilson intervals: statsmodels' proportion_confint(method="wilson") gives these
    assert v1["answer_accuracy"] == {"hits": 2, "n": 3, "rate": pytest.approx(2 / 3),
                                     "ci95": pytest.approx([0.207660, 0.938508], abs=1e-6)}
    assert v1["classification_kappa"] == pytest.approx(0.4)
    assert v1["agent_correctness_agreement"]["hits"] == 2
    assert v1["confusion"]["counts"][:2] == [[1, 0, 0, 0, 0], [1, 1, 0, 0, 0]]
    assert v1["fallback"] == {"hits": 1, "n": 5, "rate": pytest.approx(0.2),
                              "ci95": pytest.approx([0.036224, 0.624465], abs=1e-6)}
    assert v1["cost_per_cell_usd"] == pytest.approx(0.02)
    agents = v1["agent_agreement"]
    assert {k: agents[k] for k in ("agreed", "n", "rate", "ci95")} == {
        "agreed": 4, "n": 6, "rate": pytest.approx(4 / 6),
        "ci95": pytest.approx([0.299993, 0.903229], abs=1e-6)}
    assert v2["classification_kappa"] == pytest.approx(1.0)
    assert [r.key for r in first] and all(r.key.decode().startswith("T|f|v") for r in first)
    letters = await collect(bootstrap, dlq, until=2, timeout=10, quiet=0.5)
    assert sorted(DeadLetterHeaders.from_kafka(r.headers).error_type for r in letters) == [
        "schema_error", "unknown_task"]

    # restart: same figures, same ids -> nothing new; the bad adjudication is not re-sent
    more = sc.adjudication("c2", "no", "agent_b_error", "agent_a", minute=40)
    with worker("calibrate", settings, tmp_path, tag="-2") as proc:
        # wait for the catch-up line (it now reads four topics: the jobs too)
        deadline = asyncio.get_running_loop().time() + 30
        while "caught up" not in proc.log_text() and (
                asyncio.get_running_loop().time() < deadline):
            await asyncio.sleep(0.1)
        assert "published 0" in proc.log_text(), proc.log_text()[-2000:]
        await produce(bootstrap, settings.topics.adjudications, _keyed([more]))
        after = await collect(bootstrap, topic, until=3, timeout=30, quiet=1.5)
    assert len(await collect(bootstrap, dlq, timeout=2, quiet=0)) == 2
    # c2's final answer is now "no": v1 (suggested "no") 3/3, v2 (suggested "yes") 1/2
    assert len(after) == 4
    assert latest(after)["v1"]["answer_accuracy"]["hits"] == 3
    assert latest(after)["v2"]["answer_accuracy"]["hits"] == 1

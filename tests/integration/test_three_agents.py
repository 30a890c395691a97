"""A task with three expected agents, end to end on a real broker: detect decides each
cell once all three answered, the judge's results name all three by id (a third agent whose
answer is the suggested one counts as right), and calibration names them too (issue 16)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import orjson
import pytest

from streams.sampledata import DATA_DIR
from streams.topics import ensure_topics
from tests.helpers import collect, produce, values, worker
from tests.helpers import test_settings as make_settings

pytestmark = pytest.mark.integration

TASK, PATIENT = "t2dm-ckd-v1", "P001"
AGENTS = ("default", "skeptical", "third")


def three_agent_answers() -> list[tuple[bytes, bytes]]:
    """P001's sample answers plus a third agent: it answers as ``default`` except on
    ace_arb_use, where it sides with ``skeptical``."""
    out: list[tuple[bytes, bytes]] = []
    for line in (DATA_DIR / "answers.jsonl").read_bytes().splitlines():
        rec = orjson.loads(line)
        if rec["patient_id"] != PATIENT:
            continue
        key = f"{TASK}|{PATIENT}|{rec['field_id']}".encode()
        out.append((key, line))
        copy_of = "skeptical" if rec["field_id"] == "ace_arb_use" else "default"
        if rec["agent_id"] == copy_of:
            third = {**rec, "agent_id": "third", "run_id": "run-third-1",
                     "event_id": rec["event_id"].replace("evt-", "evt-3rd-")}
            out.append((key, orjson.dumps(third)))
    return out


def adjudications() -> list[tuple[bytes, bytes]]:
    lines = (DATA_DIR / "adjudications.jsonl").read_bytes().splitlines()
    return [(orjson.loads(x)["cell"].encode(), x) for x in lines
            if orjson.loads(x)["patient_id"] == PATIENT]


def test_a_task_with_three_agents_is_decided_judged_and_calibrated(bootstrap: str,
                                                                   tmp_path: Path) -> None:
    s = make_settings(bootstrap, expected_agents_by_task={TASK: list(AGENTS)})
    t = s.topics
    answers = three_agent_answers()
    cells = {k for k, _ in answers}
    asyncio.run(ensure_topics(s))
    asyncio.run(produce(bootstrap, t.agent_answers, answers))
    asyncio.run(produce(bootstrap, t.adjudications, adjudications()))
    with worker("detect", s, tmp_path) as detect, worker("judge", s, tmp_path) as judge, \
            worker("calibrate", s, tmp_path) as calibrate:
        outcomes = asyncio.run(collect(bootstrap, t.cell_outcomes, until=len(cells),
                                       timeout=90, quiet=1.0))
        assert len(outcomes) == len(cells), detect.log_text()[-2000:]
        jobs = values(asyncio.run(collect(bootstrap, t.judge_jobs, timeout=5, quiet=0.5)))
        results = values(asyncio.run(collect(bootstrap, t.judge_results, until=len(jobs),
                                             timeout=90, quiet=1.0)))
        assert jobs and len(results) == len(jobs), judge.log_text()[-2000:]

        def calibrated(records: list[Any]) -> bool:  # and the agents' agreement is in
            return any(r["cells_adjudicated"] and (r["agent_agreement"] or {}).get("cells")
                       for r in values(records))

        cal = values(asyncio.run(collect(bootstrap, t.calibration, done=calibrated,
                                         timeout=90, quiet=1.0)))
        assert calibrated_groups(cal), calibrate.log_text()[-2000:]

    for o in values(outcomes):  # every cell waited for its three agents, none settled
        assert tuple(o["agents"]) == AGENTS and o["missing_agents"] == [], o
    by_job = {j["job_id"]: j for j in jobs}
    for r in results:
        job = by_job[r["job_id"]]
        assert [a["agent_id"] for a in job["answers"]] == list(AGENTS)
        assert tuple(r["agents"]) == AGENTS
        suggested = r["analysis"]["suggested_answer"]
        if r["kind"] == "disagreement" and suggested is not None:
            # the rules tie correctness to the suggested answer; the third agent is held to
            # the same test, so the agents named right are exactly those who answered it
            right = [a for a, v in zip(AGENTS, job["normalized"], strict=True) if v == suggested]
            assert r["correct_agents"] == right, r
    stage = [r for r in results if r["field_id"] == "ckd_stage"]
    assert stage and stage[0]["kind"] == "disagreement"
    assert any("third" in (r["correct_agents"] or ()) for r in results), [
        (r["field_id"], r["analysis"]["suggested_answer"], r["correct_agents"]) for r in results]
    for record in calibrated_groups(cal):
        assert tuple(record["agents"]) == AGENTS
    # issue 27: agreement among any number of agents, and each pair by id
    agreed = [r for r in calibrated_groups(cal) if (r["agent_agreement"] or {}).get("cells")]
    assert agreed, cal
    for record in agreed:
        agreement = record["agent_agreement"]
        assert agreement["raters"] == 3, agreement
        assert [tuple(p["agents"]) for p in agreement["pairwise"]] == [
            (AGENTS[0], AGENTS[1]), (AGENTS[0], AGENTS[2]), (AGENTS[1], AGENTS[2])]
        assert agreement["fleiss_kappa"] is None or -1 <= agreement["fleiss_kappa"] <= 1


def calibrated_groups(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in records if r["cells_adjudicated"]]

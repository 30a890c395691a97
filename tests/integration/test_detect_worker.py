"""The detect worker on a real broker with the checked-in sample."""

from __future__ import annotations

import asyncio
import signal
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson
import pytest

from agents.settings import Settings
from schemas.dlq import DeadLetterHeaders
from schemas.skill import load_skill
from streams.topics import ensure_topics
from tests.helpers import collect, produce, test_settings, values, wait_committed, worker
from tests.integration.sample import Sample, load_sample, reference_jobs

pytestmark = pytest.mark.integration
#: Also on the embedded broker: the detector runs there in the demo and in local development,
#: and a SIGKILLed member of its group never expires there (streams/member_eviction.py).
EMBEDDED_TOO = pytest.mark.brokers("embedded", "apache")


def by_cell(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for rec in records:
        out[f"{rec['task_id']}|{rec['patient_id']}|{rec['field_id']}"].append(rec)
    return out


async def wait_all_decided(s: Settings, sample: Sample, timeout: float = 90) -> list[Any]:
    """Outcome records until every truth cell has one (then a quiet period for extras)."""
    def all_cells(records: list[Any]) -> bool:
        return len({r.key for r in records}) >= len(sample.truth)

    return await collect(s.kafka.bootstrap_servers, s.topics.cell_outcomes,
                         done=all_cells, timeout=timeout, quiet=3.0)


def assert_matches_truth(sample: Sample, jobs: list[dict[str, Any]],
                         outcomes: list[dict[str, Any]]) -> None:
    job_cells, outcome_cells = by_cell(jobs), by_cell(outcomes)
    assert set(outcome_cells) == set(sample.truth), "every cell decided, no unknown cells"
    assert set(job_cells) <= set(sample.truth)
    wrong = {cell: (sorted({j["kind"] for j in job_cells.get(cell, [])}), t["job_kinds"])
             for cell, t in sample.truth.items()
             if sorted({j["kind"] for j in job_cells.get(cell, [])}) != t["job_kinds"]}
    assert not wrong, f"job kinds differ from ground truth (got, want): {wrong}"
    final = {cell: recs[-1]["outcome"] for cell, recs in outcome_cells.items()}
    bad = {c: (final[c], t["outcome"]) for c, t in sample.truth.items() if final[c] != t["outcome"]}
    assert not bad, f"final outcomes differ from ground truth (got, want): {bad}"


@EMBEDDED_TOO
def test_whole_sample_matches_ground_truth(bootstrap: str, tmp_path: Path) -> None:
    sample = load_sample()
    s = test_settings(bootstrap)
    asyncio.run(ensure_topics(s))
    with worker("detect", s, tmp_path) as w:
        asyncio.run(produce(bootstrap, s.topics.agent_answers,
                            sample.answers + [(None, m) for m in sample.malformed]))
        outcomes = values(asyncio.run(wait_all_decided(s, sample)))
        jobs_raw = asyncio.run(collect(bootstrap, s.topics.judge_jobs, timeout=10, quiet=1))
        dlq = asyncio.run(collect(bootstrap, s.topics.dlq(s.topics.agent_answers),
                                  until=len(sample.malformed), timeout=20))
        assert w.alive, w.log_text()[-3000:]
    jobs = values(jobs_raw)
    assert_matches_truth(sample, jobs, outcomes)
    # nothing else: one outcome per decision, one job per (cell, job id), no duplicate ids
    assert len({j["job_id"] for j in jobs}) == len(jobs)
    assert len({o["outcome_id"] for o in outcomes}) == len(outcomes)
    # malformed records land in the DLQ untouched, with typed headers
    assert sorted(r.value for r in dlq) == sorted(sample.malformed)
    headers = [DeadLetterHeaders.from_kafka(r.headers) for r in dlq]
    assert sorted(h.error_type for h in headers) == sorted(sample.malformed_types)
    assert {h.source_topic for h in headers} == {s.topics.agent_answers}
    # job ids are what an in-process reference run derives from the same inputs
    skill = load_skill(s.skill_dir)
    ref = reference_jobs(sample, skill, s.expected_agents, s.low_confidence_threshold)
    assert {j["job_id"] for j in jobs} == set().union(*ref.values())


@EMBEDDED_TOO
def test_sigkill_mid_sample_loses_no_job(bootstrap: str, tmp_path: Path) -> None:
    sample = load_sample()
    s = test_settings(bootstrap)
    asyncio.run(ensure_topics(s))
    cells = sorted(sample.truth)
    first, second = set(cells[: len(cells) // 2]), set(cells[len(cells) // 2:])
    with worker("detect", s, tmp_path, tag="-1") as w1:
        asyncio.run(produce(bootstrap, s.topics.agent_answers, sample.by_cells(first)))
        asyncio.run(collect(bootstrap, s.topics.cell_outcomes, until=1, timeout=60, quiet=0))
        w1.kill(signal.SIGKILL)  # mid-stream: outputs, state and offsets in flight
    # The race that made this test flaky, forced: the outage outlasts the settle window, so
    # cells with one answer applied are overdue while their other answers are still unread.
    # The restarted worker must read that backlog before it decides anything by timeout.
    deadline = time.time() + s.settle_seconds
    while time.time() < deadline:
        time.sleep(0.1)
    with worker("detect", s, tmp_path, tag="-2") as w2:
        asyncio.run(produce(bootstrap, s.topics.agent_answers, sample.by_cells(second)))
        outcomes = values(asyncio.run(wait_all_decided(s, sample, timeout=120)))
        jobs = values(asyncio.run(collect(bootstrap, s.topics.judge_jobs, timeout=10, quiet=1)))
        assert w2.alive, w2.log_text()[-3000:]
    assert_matches_truth(sample, jobs, outcomes)
    skill = load_skill(s.skill_dir)
    ref = reference_jobs(sample, skill, s.expected_agents, s.low_confidence_threshold)
    emitted: dict[str, set[str]] = defaultdict(set)
    for cell, recs in by_cell(jobs).items():
        emitted[cell] = {j["job_id"] for j in recs}
    # no job id lost, none invented; duplicates (at-least-once) carry the same id
    assert {c: ids for c, ids in emitted.items() if ids} == {c: i for c, i in ref.items() if i}
    per_id: dict[str, set[bytes]] = defaultdict(set)
    for j in jobs:
        per_id[j["job_id"]].add(orjson.dumps({k: j[k] for k in ("kind", "answers", "normalized")}))
    assert all(len(v) == 1 for v in per_id.values())


def test_two_workers_share_the_partitions(bootstrap: str, tmp_path: Path) -> None:
    """Scale-out: two processes in one group split the partitions and still agree with the
    ground truth (all events of a cell meet in one partition, so in one worker)."""
    sample = load_sample()
    s = test_settings(bootstrap, kafka={"partitions": 4})
    asyncio.run(ensure_topics(s))
    with worker("detect", s, tmp_path, tag="-a") as a, worker("detect", s, tmp_path, tag="-b") as b:
        # Both in the group before the first record: a rebalance mid-stream redelivers what
        # was not committed yet (at-least-once, same ids: the SIGKILL test covers that).
        wait_shared((a, b), {0, 1, 2, 3}, timeout=120)
        asyncio.run(produce(bootstrap, s.topics.agent_answers, sample.answers))
        outcomes = values(asyncio.run(wait_all_decided(s, sample, timeout=300)))
        jobs = values(asyncio.run(collect(bootstrap, s.topics.judge_jobs, timeout=10, quiet=1)))
        assert a.alive and b.alive, a.log_text()[-2000:] + b.log_text()[-2000:]
        mine = [active_partitions(w.log_text()) for w in (a, b)]
    assert_matches_truth(sample, jobs, outcomes)
    assert len({j["job_id"] for j in jobs}) == len(jobs)
    # each process owned a share of the partitions, and every partition had one owner
    assert all(mine) and not (mine[0] & mine[1]) and mine[0] | mine[1] == {0, 1, 2, 3}


def wait_shared(workers: tuple[Any, ...], partitions: set[int], timeout: float) -> None:
    """Until each worker's last assignment is its own non-empty share of ``partitions``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        shares = [active_partitions(w.log_text()) for w in workers]
        if (all(shares) and sum(map(len, shares)) == len(partitions)
                and set().union(*shares) == partitions):
            return
        assert all(w.alive for w in workers), workers[0].log_text()[-2000:]
        time.sleep(0.1)
    raise AssertionError(f"no stable shared assignment within {timeout} s: {shares}")


def active_partitions(log: str) -> set[int]:
    """Partitions in the last "Highwater - Active" table Faust logged at assignment."""
    table = log.rsplit("Highwater - Active", 1)[-1].split("\n\n", 1)[0]
    rows = [line.split("|") for line in table.splitlines() if line.startswith("|")]
    return {int(r[2]) for r in rows if len(r) > 2 and r[2].strip().isdigit()}


@pytest.mark.slow  # a settle window out of service, then a 6,000-record backlog, per variant
@pytest.mark.parametrize("stale_ticks", [False, True], ids=["own-ticks", "stale-ticks"])
def test_restart_reads_the_backlog_before_settling_by_timeout(bootstrap: str, tmp_path: Path,
                                                               stale_ticks: bool) -> None:
    """The race behind the flaky SIGKILL test, made deterministic: cells hold one agent's
    answer when the worker dies; while it is down (longer than the settle window) the other
    agent's answers arrive behind a backlog. The restarted worker must read the backlog before
    deciding anything by timeout: no cell may come out ``agent_missing``.

    ``stale-ticks``: the dead worker had also sent a settle tick for every cell, not yet read
    (ticks live on their own topic, so the restarted worker reads them before the answers'
    backlog). The worker before the settle gate decided every cell ``agent_missing`` on
    them; the gate makes a tick wait for the partition's offsets."""
    sample = load_sample()
    s = test_settings(bootstrap)
    asyncio.run(ensure_topics(s))
    by_cell_agents: dict[bytes, dict[str, bytes]] = defaultdict(dict)
    for key, value in sample.answers:
        by_cell_agents[key][orjson.loads(value)["agent_id"]] = value
    agents = s.expected_agents
    cells = [k for k, a in by_cell_agents.items() if set(agents) <= set(a)][:12]
    assert len(cells) >= 6
    first = [(k, by_cell_agents[k][agents[0]]) for k in cells]
    # a backlog in the same partitions: records that only go to the DLQ
    filler = [(k, b"{not json") for _ in range(500) for k in cells]
    rest = [(k, by_cell_agents[k][a]) for k in cells for a in agents[1:]]
    with worker("detect", s, tmp_path, tag="-1") as w1:
        asyncio.run(produce(bootstrap, s.topics.agent_answers, first))
        done = asyncio.run(wait_committed(bootstrap, s.groups.detect, s.topics.agent_answers))
        assert sum(done.values()) == len(first), w1.log_text()[-2000:]
        w1.kill(signal.SIGKILL)
    asyncio.run(produce(bootstrap, s.topics.agent_answers, filler + rest))
    if stale_ticks:  # keyed like the answers: the same partition of the co-partitioned topic
        asyncio.run(produce(bootstrap, s.topics.detect_ticks, [(k, b"") for k in cells]))
    deadline = time.time() + s.settle_seconds  # every cell overdue before the restart
    while time.time() < deadline:
        time.sleep(0.1)
    with worker("detect", s, tmp_path, tag="-2") as w2:
        outcomes = values(asyncio.run(collect(
            bootstrap, s.topics.cell_outcomes, timeout=90, quiet=3.0,
            done=lambda rs: len({r.key for r in rs}) >= len(cells))))
        assert w2.alive, w2.log_text()[-3000:]
    assert {o["task_id"] + "|" + o["patient_id"] + "|" + o["field_id"]
            for o in outcomes} == {k.decode() for k in cells}
    early = [o for o in outcomes if o["missing_agents"]]
    assert not early, [(o["patient_id"], o["field_id"], o["outcome"]) for o in early]

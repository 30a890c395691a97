"""The "already produced" guard: an id is produced once, even by two deliveries in flight; the
result series: which result a new version's result supersedes."""

from __future__ import annotations

import asyncio

import pytest

from streams.produced import ProducedIds, Series, result_headers
from streams.topics import _add_id


async def test_two_deliveries_in_flight_produce_once() -> None:
    ledger = ProducedIds()
    produced: list[str] = []

    async def deliver(tag: str) -> None:
        async with ledger.claim("r1") as fresh:
            if fresh:
                await asyncio.sleep(0.01)
                produced.append(tag)

    await asyncio.gather(deliver("a"), deliver("b"), deliver("c"))
    assert produced == ["a"] and "r1" in ledger


async def test_a_failed_attempt_leaves_the_id_free() -> None:
    ledger = ProducedIds()
    with pytest.raises(RuntimeError):
        async with ledger.claim("r1") as fresh:
            assert fresh
            raise RuntimeError("publishing failed")
    async with ledger.claim("r1") as fresh:
        assert fresh


def test_ids_are_read_from_result_records() -> None:
    found: set[str] = set()
    for raw in (b'{"result_id": "x1"}', b"{bad", b"[1]", None, b'{"result_id": 3}'):
        _add_id(found, raw, "result_id")
    assert found == {"x1"}


def test_supersedes_names_the_latest_result_of_another_version() -> None:
    s = Series()
    assert s.supersedes("job-1", "judge-v3+a") is None
    s.add("job-1", "judge-v2+x", "r-old", {"output_tokens": 90, "llm_calls": 1})
    s.add("job-1", "judge-v3+a", "r-a")
    assert s.supersedes("job-1", "judge-v3+a") == "r-old"
    assert s.supersedes("job-1", "judge-v4+b") == "r-a"  # the latest other version
    s.add("job-1", "judge-v2+x", "r-old")  # republished later: now the latest
    assert s.supersedes("job-1", "judge-v4+b") == "r-old"
    assert s.ids == {"r-old", "r-a"} and s.counts == {"judge-v2+x": 2, "judge-v3+a": 1}
    assert s.output_tokens == {"judge-v2+x": [90, 1]}


def test_headers_carry_the_series_and_supersedes_only_when_known() -> None:
    assert dict(result_headers("r", "v", "job_id", "j", None)) == {
        "result_id": b"r", "prompt_version": b"v", "job_id": b"j"}
    assert dict(result_headers("r", "v", "request_id", "q", "r0"))["supersedes"] == b"r0"

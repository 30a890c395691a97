"""The "already produced" guard: an id is produced once, even by two deliveries in flight."""

from __future__ import annotations

import asyncio

import pytest

from streams.produced import ProducedIds
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

"""The detect worker's stall exit: records waiting on an owned partition and none read for
the limit ends the worker (a quarter of it in, the partition is read again from its
position first); progress, recovery, rebalancing or an empty partition do not."""

from __future__ import annotations

import asyncio
import os
from types import SimpleNamespace
from typing import Any

import pytest
from faust.types import TP

from streams.detect.backlog import SettleGate
from streams.detect.stall import CHECK_EVERY, StallExit
from streams.exit_codes import ExitCode

TOPIC = "answers"


class Consumer:
    def __init__(self, ends: dict[int, int], committed: dict[int, int]) -> None:
        self.ends = ends
        self._committed_offset = {TP(TOPIC, p): o for p, o in committed.items()}

        self.sought: list[tuple[int, int]] = []

    async def seek(self, tp: TP, offset: int) -> None:
        self.sought.append((tp.partition, offset))

    def assignment(self) -> set[TP]:
        return {TP(TOPIC, p) for p in self.ends} | {TP("other", 0)}

    async def highwaters(self, *tps: TP) -> dict[TP, int]:
        return {tp: self.ends[tp.partition] for tp in tps}


def stall_exit(ends: dict[int, int], committed: dict[int, int],
               **app: Any) -> tuple[StallExit, SettleGate, Any]:
    gate = SettleGate()
    fake = SimpleNamespace(consumer=Consumer(ends, committed), **app)
    return StallExit(fake, TOPIC, gate, limit=60.0), gate, fake


def run(watch: StallExit, *moments: float) -> None:
    for now in moments:
        asyncio.run(watch.check(now))


@pytest.fixture()
def exits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    codes: list[int] = []
    monkeypatch.setattr(os, "_exit", codes.append)
    return codes


def test_records_waiting_and_none_read_past_the_limit_exits(exits: list[int]) -> None:
    watch, _, _ = stall_exit({0: 10, 1: 5}, {0: 4, 1: 5})  # partition 1 is read to its end
    run(watch, 0.0, 55.0)
    assert exits == []
    run(watch, 57.0)  # within CHECK_EVERY of the last check: not asked
    run(watch, 61.0)
    assert exits == [ExitCode.FAILURE]


def test_progress_restarts_the_clock(exits: list[int]) -> None:
    watch, gate, _ = stall_exit({0: 10}, {0: 4})
    run(watch, 0.0)
    gate.read(0, 4)  # one record read: position 5
    run(watch, 50.0, 108.0)
    assert exits == []
    run(watch, 115.0)  # 65 s since the last progress
    assert exits == [ExitCode.FAILURE]


def test_checks_are_spaced_and_recovery_is_no_stall(exits: list[int]) -> None:
    watch, _, fake = stall_exit({0: 10}, {0: 4})
    run(watch, 0.0, 58.0)
    fake.in_recovery = True
    run(watch, 66.0)  # reading changelogs: the watch starts again
    fake.in_recovery = False
    run(watch, 72.0, 72.0 + CHECK_EVERY / 2, 130.0)
    assert exits == []
    run(watch, 135.0)
    assert exits == [ExitCode.FAILURE]


def test_an_idle_partition_is_read_again_once_before_the_exit(exits: list[int]) -> None:
    """The restarted worker of a SIGKILL test read nothing for 60 s and exited (Faust had
    fetched the backlog and delivered none of it): a quarter of the limit in, the edge seeks
    the partition back to where it has been read, once per idle spell."""
    watch, gate, fake = stall_exit({0: 10, 1: 5}, {0: 4, 1: 5})
    run(watch, 0.0, 10.0)
    assert fake.consumer.sought == []
    run(watch, 16.0, 25.0, 40.0)
    assert fake.consumer.sought == [(0, 4)]  # partition 1 has nothing waiting
    gate.read(0, 4)  # the re-read delivered a record: a new spell, from position 5
    run(watch, 45.0, 55.0)
    assert fake.consumer.sought == [(0, 4)]
    run(watch, 61.0)
    assert fake.consumer.sought == [(0, 4), (0, 5)] and exits == []
    run(watch, 106.0)  # 61 s without progress since position 5
    assert exits == [ExitCode.FAILURE]

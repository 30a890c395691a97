"""An empty SyncGroup assignment (the leader left this member out) is a rejoin."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from aiokafka.consumer import group_coordinator

from streams import group_join


@pytest.mark.parametrize(("answer", "left_out"), [
    (b"", True),            # the leader named no assignment for this member
    (None, False),          # the sync itself failed (aiokafka already rejoins)
    (b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", False),  # an encoded assignment, even empty
])
def test_is_left_out(answer: bytes | None, left_out: bool) -> None:
    assert group_join.is_left_out(answer) is left_out


class FakeCoordinator:
    generation = 7

    def __init__(self) -> None:
        self.rejoins = 0

    def request_rejoin(self) -> None:
        self.rejoins += 1


@pytest.mark.parametrize(("answer", "returned", "rejoins"), [
    (b"", None, 1),
    (b"\x00\x00assignment", b"\x00\x00assignment", 0),
    (None, None, 0),
])
def test_patched_sync_rejoins_only_when_left_out(monkeypatch: pytest.MonkeyPatch,
                                                  answer: bytes | None,
                                                  returned: bytes | None, rejoins: int) -> None:
    async def original(self: Any, request: Any) -> bytes | None:
        return answer

    cls = group_coordinator.CoordinatorGroupRebalance
    monkeypatch.setattr(cls, "_send_sync_group_request", original)
    monkeypatch.setattr(group_join, "_original", None)
    assert group_join.install_empty_assignment_rejoin()
    fake = type("Rebalance", (), {})()
    fake.group_id, fake._coordinator = "g", FakeCoordinator()
    got = asyncio.run(cls._send_sync_group_request(fake, object()))
    assert got == returned
    assert fake._coordinator.rejoins == rejoins
    assert group_join.install_empty_assignment_rejoin()  # once per process: idempotent


def test_not_installed_on_an_unchecked_aiokafka(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(group_join, "_original", None)
    monkeypatch.setattr(group_join.aiokafka, "__version__", "0.0.1")
    assert group_join.install_empty_assignment_rejoin() is False

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
    monkeypatch.setattr(group_join._coordinator, "GroupCoordinator",
                        type("Coordinator", (FakeGroupCoordinator,), {}))
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


class FakeGroupCoordinator:
    """The fields aiokafka's reset_generation touches."""

    def __init__(self, member: str) -> None:
        self.member_id, self.generation, self.rejoins = member, 5, 0

    def reset_generation(self) -> None:  # aiokafka 0.14's body
        self.generation, self.member_id = -1, ""
        self.rejoins += 1

    async def _on_join_complete(self, *args: Any) -> str:
        return "joined"


def installed_on(monkeypatch: pytest.MonkeyPatch) -> type[FakeGroupCoordinator]:
    cls = type("Coordinator", (FakeGroupCoordinator,), {})
    monkeypatch.setattr(group_join._coordinator, "GroupCoordinator", cls)
    monkeypatch.setattr(group_join, "_original", None)
    monkeypatch.setattr(group_coordinator.CoordinatorGroupRebalance,
                        "_send_sync_group_request",
                        group_coordinator.CoordinatorGroupRebalance._send_sync_group_request)
    assert group_join.install_empty_assignment_rejoin()
    return cls


def test_stale_generation_rejoins_as_the_same_member_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cls = installed_on(monkeypatch)
    c = cls("member-1")
    c.reset_generation()  # ILLEGAL_GENERATION: keep the id (no ghost member left behind)
    assert (c.member_id, c.generation, c.rejoins) == ("member-1", -1, 1)
    c.reset_generation()  # the broker did not know it either: drop it as aiokafka does
    assert (c.member_id, c.rejoins) == ("", 2)
    c.reset_generation()  # no id to keep
    assert c.member_id == ""


def test_a_completed_join_lets_a_later_reset_keep_the_id_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    cls = installed_on(monkeypatch)
    c = cls("member-1")
    c.reset_generation()
    assert asyncio.run(c._on_join_complete(6, "member-1", "faust", b"x")) == "joined"
    c.reset_generation()
    assert c.member_id == "member-1"

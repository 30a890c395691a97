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


def not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """As before the first install, until the test ends: an install on fakes must not leave
    the fakes' methods behind the real patched aiokafka classes of this process (a later
    test's consumer would call them)."""
    for name in ("_original", "_original_reset", "_original_join"):
        monkeypatch.setattr(group_join, name, None)


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
    not_installed(monkeypatch)
    monkeypatch.setattr(group_join._coordinator, "GroupCoordinator",
                        type("Coordinator", (FakeGroupCoordinator,), {}))
    monkeypatch.setattr(cls, "perform_group_join", cls.perform_group_join)
    assert group_join.install_empty_assignment_rejoin()
    fake = type("Rebalance", (), {})()
    fake.group_id, fake._coordinator = "g", FakeCoordinator()
    got = asyncio.run(cls._send_sync_group_request(fake, object()))
    assert got == returned
    assert fake._coordinator.rejoins == rejoins
    assert group_join.install_empty_assignment_rejoin()  # once per process: idempotent


def test_not_installed_on_an_unchecked_aiokafka(monkeypatch: pytest.MonkeyPatch) -> None:
    not_installed(monkeypatch)
    monkeypatch.setattr(group_join.aiokafka, "__version__", "0.0.1")
    assert group_join.install_empty_assignment_rejoin() is False


class FakeGroupCoordinator:
    """The fields aiokafka's reset_generation touches."""

    def __init__(self, member: str) -> None:
        self.member_id, self.generation, self.rejoins = member, 5, 0

    def reset_generation(self) -> None:  # aiokafka 0.14's body
        self.generation, self.member_id = -1, ""
        self.rejoins += 1


class FakeRebalance:
    """perform_group_join: the broker's answer to a JoinGroup sent with the current id."""

    def __init__(self, coordinator: FakeGroupCoordinator, known: bool) -> None:
        self._coordinator, self.known = coordinator, known

    async def perform_group_join(self) -> Any:
        if not self.known:  # UNKNOWN_MEMBER_ID: aiokafka resets and returns None
            self._coordinator.reset_generation()
            return None
        return ("faust", b"assignment")


def installed_on(monkeypatch: pytest.MonkeyPatch
                 ) -> tuple[type[FakeGroupCoordinator], type[FakeRebalance]]:
    coordinator = type("Coordinator", (FakeGroupCoordinator,), {})
    rebalance = type("Rebalance", (FakeRebalance,), {
        "_send_sync_group_request": group_coordinator.CoordinatorGroupRebalance.
        _send_sync_group_request})
    monkeypatch.setattr(group_join._coordinator, "GroupCoordinator", coordinator)
    monkeypatch.setattr(group_join._coordinator, "CoordinatorGroupRebalance", rebalance)
    not_installed(monkeypatch)
    assert group_join.install_empty_assignment_rejoin()
    return coordinator, rebalance


def test_stale_generation_rejoins_as_the_same_member(monkeypatch: pytest.MonkeyPatch) -> None:
    coordinator, rebalance = installed_on(monkeypatch)
    c = coordinator("member-1")
    for _ in range(4):  # one reset per failed partition of an offset commit
        c.reset_generation()
    assert (c.member_id, c.generation, c.rejoins) == ("member-1", -1, 4)
    assert asyncio.run(rebalance(c, known=True).perform_group_join()) is not None
    c.reset_generation()  # in the group again: a later reset keeps the id as well
    assert c.member_id == "member-1"


def test_an_id_the_broker_refuses_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    coordinator, rebalance = installed_on(monkeypatch)
    c = coordinator("member-1")
    c.reset_generation()
    assert asyncio.run(rebalance(c, known=False).perform_group_join()) is None
    assert c.member_id == ""  # UNKNOWN_MEMBER_ID: the next JoinGroup asks for a new id
    c.reset_generation()
    assert c.member_id == ""

"""streams.any_broker: a request any broker may answer skips brokers it cannot reach (a
crashed broker stays in the metadata until its session expires: issue 25)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest
from aiokafka.errors import NodeNotReadyError

from streams import any_broker
from streams.any_broker import order, send_to_any


@dataclass
class Node:
    nodeId: int  # aiokafka BrokerMetadata attribute name


@dataclass
class Cluster:
    ids: list[int]

    def brokers(self) -> list[Node]:
        return [Node(i) for i in self.ids]


@dataclass
class Client:
    """An aiokafka client whose ``dead`` nodes fail; a metadata refresh drops ``dead``
    from the cluster once ``expires_after`` refreshes happened (a session expiring)."""

    cluster: Cluster
    dead: set[int]
    expires_after: int | None = None
    joins: list[int] = field(default_factory=list)  # brokers the expiring refresh adds
    sent: list[int] = field(default_factory=list)
    refreshes: int = 0

    async def send(self, node: int, request: object) -> str:
        self.sent.append(node)
        if node in self.dead:
            raise NodeNotReadyError(f"node id {node}")
        return f"answer of {node}"

    async def force_metadata_update(self) -> bool:
        self.refreshes += 1
        if self.expires_after is not None and self.refreshes >= self.expires_after:
            self.cluster.ids = [i for i in self.cluster.ids if i not in self.dead] + self.joins
        return True


@pytest.mark.parametrize(("nodes", "prefer", "first"), [
    ([1, 2, 3], 2, 2),   # the controller first
    ([1, 2, 3], 7, None),  # a preferred node the metadata does not name is left out
    ([1, 2, 3], None, None),
])
def test_order_tries_the_preferred_node_first_and_every_node_once(
        nodes: list[int], prefer: int | None, first: int | None) -> None:
    got = order(nodes, prefer, random.Random(1))
    assert sorted(got) == nodes
    if first is not None:
        assert got[0] == first


@pytest.mark.parametrize("seed", range(6))
async def test_a_dead_broker_in_the_metadata_is_skipped(seed: int) -> None:
    client = Client(Cluster([1, 2, 3]), dead={2})
    answer = await send_to_any(client, "metadata", timeout=5, rng=random.Random(seed))
    assert answer in ("answer of 1", "answer of 3")
    assert client.refreshes == 0


async def test_a_dead_preferred_controller_is_skipped() -> None:
    client = Client(Cluster([1, 2, 3]), dead={2})
    answer = await send_to_any(client, "create", timeout=5, prefer=2)
    assert client.sent[0] == 2 and answer != "answer of 2"


async def test_when_no_broker_answers_the_metadata_is_refreshed_until_one_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(any_broker, "ROUND_PAUSE_SECONDS", 0.0)
    # the only broker known is dead; the second refresh learns of a live one
    client = Client(Cluster([2]), dead={2}, expires_after=2, joins=[3])
    assert await send_to_any(client, "metadata", timeout=5) == "answer of 3"
    assert client.refreshes == 2 and client.sent == [2, 2, 3]


async def test_past_the_deadline_the_last_failure_is_raised(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(any_broker, "ROUND_PAUSE_SECONDS", 0.0)
    client = Client(Cluster([1, 2]), dead={1, 2})
    with pytest.raises(NodeNotReadyError):
        await send_to_any(client, "metadata", timeout=0.05)
    assert client.refreshes >= 1 and set(client.sent) == {1, 2}


@dataclass
class Metadata:
    controller_id: int


@dataclass
class MetadataClient(Client):
    """A client whose metadata names ``controller`` (which may be dead: a broker crashed in
    the seconds before its session expired still appears there)."""

    controller: int = 1

    async def send(self, node: int, request: object) -> Metadata:  # type: ignore[override]
        await super().send(node, request)
        return Metadata(self.controller)

    async def ready(self, node: int) -> bool:
        return node not in self.dead


@pytest.mark.parametrize("seed", range(6))
async def test_faust_creates_its_topics_through_a_broker_that_answers(seed: int) -> None:
    """Faust's own lookup asked the first broker of its metadata and sent CreateTopics to the
    controller it named: with either of them dead, detect died at start (issue 25 item 5)."""
    from faust.transport.drivers.aiokafka import Transport

    any_broker.install_faust_topic_creation()
    dead_controller = MetadataClient(Cluster([1, 2, 3]), dead={1}, controller=1)
    node = await Transport._get_controller_node(object(), object(), dead_controller, 5000)
    assert node in (2, 3)
    live = MetadataClient(Cluster([1, 2, 3]), dead={3}, controller=2)
    assert await any_broker.answering_node(live, 5, random.Random(seed)) == 2


async def test_no_broker_that_answers_is_no_controller(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(any_broker, "ROUND_PAUSE_SECONDS", 0.0)
    client = MetadataClient(Cluster([1, 2]), dead={1, 2})
    with pytest.raises(NodeNotReadyError):
        await any_broker.answering_node(client, 0.05)

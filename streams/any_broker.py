"""aiokafka's admin client gives up on the first broker it cannot reach: try the others.

Admin requests that any broker may answer go to one that answers.

aiokafka's admin client sends such a request (Metadata, FindCoordinator, DescribeConfigs,
...) to a broker picked at random from its metadata, and CreateTopics/DeleteTopics to the
broker the metadata names as controller, and gives up on the first one it cannot reach
(``NodeNotReadyError``). A broker that crashed stays in the cluster's metadata until its
session times out (``broker.session.timeout.ms``, 9 s by default), so a worker started in
those seconds, or a command run then, died on its first request to it (issue 25: exit 1 with
one broker of three down, while the other two answered).

:func:`send_to_any` tries the known brokers in random order (the preferred one first),
skips those it cannot reach, and, when none answers, refreshes the metadata and tries again
until the deadline. In KRaft every broker forwards CreateTopics and DeleteTopics to the
active controller, and the "controller" in its metadata is itself any live broker, so these
may go to any broker as well. The requests sent through here are idempotent or answered per
topic (a CreateTopics repeated after a timeout says "already exists", which callers accept).
Only :mod:`streams.kafka_clients` uses it: in the one admin client it makes, and, through
:func:`install_faust_topic_creation`, in Faust's own topic creation (faust-streaming 0.15
asks the first broker of its metadata for the controller, ``_get_controller_node``, and sends
CreateTopics to whichever node that names: a detect worker started in those seconds died
creating its changelog topic).
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from aiokafka.errors import KafkaConnectionError, NodeNotReadyError, RequestTimedOutError
from aiokafka.protocol.metadata import MetadataRequest

#: Failures of the broker the request went to, not of the request: another broker may answer.
NODE_FAILURES = (NodeNotReadyError, KafkaConnectionError, RequestTimedOutError)
#: Pause between two rounds over every known broker.
ROUND_PAUSE_SECONDS = 0.5


def order(nodes: list[int], prefer: int | None, rng: random.Random) -> list[int]:
    """The brokers to try, in order: ``prefer`` first (when known), then the others shuffled
    (so that many clients do not all ask the same broker)."""
    rest = [n for n in nodes if n != prefer]
    rng.shuffle(rest)
    return ([prefer] if prefer in nodes else []) + rest


async def send_to_any(client: Any, request: Any, timeout: float, prefer: int | None = None,
                      rng: random.Random | None = None) -> Any:
    """Send ``request`` through the aiokafka ``client`` to the first broker that answers;
    raise the last broker failure when none has within ``timeout`` seconds."""
    rng = rng or random.Random()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: BaseException = NodeNotReadyError("no broker known")
    while True:
        for node in order([b.nodeId for b in client.cluster.brokers()], prefer, rng):
            try:
                return await client.send(node, request)
            except NODE_FAILURES as exc:
                last = exc
        if loop.time() >= deadline:
            raise last
        await asyncio.sleep(ROUND_PAUSE_SECONDS)
        # the dead broker leaves the metadata once its session expires; a new one joins it
        await client.force_metadata_update()


async def answering_node(client: Any, timeout: float, rng: random.Random | None = None) -> int:
    """A broker that answers now, for a CreateTopics: the controller the metadata names when
    it does (KRaft brokers forward CreateTopics to the active controller, so any other live
    broker will do when it does not)."""
    rng = rng or random.Random()
    response = await send_to_any(client, MetadataRequest([]), timeout, rng=rng)
    for node in order([b.nodeId for b in client.cluster.brokers()], response.controller_id,
                      rng):
        if await client.ready(node):
            return node
    raise NodeNotReadyError("no broker answers")


def install_faust_topic_creation() -> None:
    """Faust creates its topics (a table's changelog, the leader topic) through a broker
    that answers (:func:`answering_node`), not the first one its metadata names. Its own
    ``_get_controller_node`` (faust-streaming 0.15.x) is replaced; idempotent."""
    from faust.transport.drivers import aiokafka as driver

    async def controller(self: Any, owner: Any, client: Any, timeout: int = 30000) -> int:
        return await answering_node(client, timeout / 1000)

    driver.Transport._get_controller_node = controller  # type: ignore[method-assign]

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
Only :mod:`streams.kafka_clients` uses it, in the one admin client it makes.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from aiokafka.errors import KafkaConnectionError, NodeNotReadyError, RequestTimedOutError

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

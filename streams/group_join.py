"""A member the group leader left out joins again instead of killing its consumer.

In the Kafka group protocol a SyncGroup answer with an *empty* member assignment (zero bytes,
not an encoded empty list) means the leader's assignment did not name this member: it was
not in the member list the leader got (it joined while the leader was assigning). Kafka's
own coordinator and other clients (kafkajs #550, brod #305, KAFKA-17733) treat it as "no
assignment"; aiokafka 0.14 decodes it as a ConsumerProtocol assignment and fails in its
coordinator routine, which ends the consumer's group membership for good while the process
stays alive, consuming nothing. A detect worker stuck so held half the partitions'
cells undecided forever (seen on the embedded broker with two workers starting together).

:func:`install_empty_assignment_rejoin` makes such an answer a rejoin: the member joins the
next generation, and the leader (every Faust worker's assignor gives every member its share)
then assigns it. Applied to every broker: it is the protocol's meaning, not a work-around
for one broker. Only :mod:`streams.kafka_clients` installs it, only on the aiokafka versions
it was checked against.
"""

from __future__ import annotations

import logging
from typing import Any

import aiokafka
from aiokafka.consumer import group_coordinator as _coordinator

log = logging.getLogger(__name__)

CHECKED_AIOKAFKA = ("0.14.0",)
_original: Any = None


def is_left_out(member_assignment: bytes | None) -> bool:
    """A SyncGroup member assignment that names nothing (``None`` is a failed sync)."""
    return member_assignment is not None and len(member_assignment) == 0


def install_empty_assignment_rejoin() -> bool:
    """Patch aiokafka's group join once per process; returns whether it is active."""
    global _original
    if _original is not None:
        return True
    if aiokafka.__version__ not in CHECKED_AIOKAFKA:
        log.warning("empty-assignment rejoin not installed: checked only with aiokafka %s, "
                    "found %s", CHECKED_AIOKAFKA, aiokafka.__version__)
        return False
    rebalance = _coordinator.CoordinatorGroupRebalance
    _original = rebalance._send_sync_group_request

    async def _send_sync_group_request(self: Any, request: Any) -> Any:
        assignment = await _original(self, request)
        if not is_left_out(assignment):
            return assignment
        log.warning("group %s: the leader gave this member no assignment in generation %s; "
                    "joining again", self.group_id, self._coordinator.generation)
        self._coordinator.request_rejoin()
        return None  # perform_group_join returns None: aiokafka backs off and rejoins

    rebalance._send_sync_group_request = _send_sync_group_request
    return True


def membership_error(consumer: Any) -> BaseException | None:
    """Why ``consumer``'s group membership ended for good, or ``None`` while it lives.

    aiokafka runs a group's join, sync and heartbeats in one coordinator task; when that task
    dies (an error it does not handle) the consumer is no longer a member and never becomes
    one again, and it reports the error only from ``getmany`` and friends. Faust fetches only
    while it has partitions, so a Faust worker whose task died before its first assignment
    never hears of it. A stop (``close``) is not a death."""
    coordinator = getattr(consumer, "_coordinator", None)
    task = getattr(coordinator, "_coordination_task", None)
    closing = getattr(coordinator, "_closing", None)
    if task is None or not task.done() or task.cancelled():
        return None
    if closing is not None and closing.done():
        return None
    return task.exception() or RuntimeError("the group coordinator task ended")

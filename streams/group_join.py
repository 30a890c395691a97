"""aiokafka 0.14 quits its group on an empty sync assignment and drops its id on IllegalGeneration.

Two fixes to aiokafka's group membership, so that a worker never ends up in no group (the
second is what Kafka's Java client does since KAFKA-13419).

**A member the group leader left out joins again instead of killing its consumer.**

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
for one broker.

**A member whose generation is stale keeps its member id** (what Kafka's Java client does
since KAFKA-13419): aiokafka drops the id on ILLEGAL_GENERATION as on UNKNOWN_MEMBER_ID and
joins as a new member, so the group holds the old id too until the broker expires it. Real
Kafka does after ``session.timeout.ms`` (the rebalance waits for it meanwhile); the embedded
broker never does, and a group whose old leader id was such a ghost waited for that leader's
SyncGroup forever (seen: two detect workers starting together, the group stuck in
CompletingRebalance with three members for two processes: the embedded broker answered an
offset commit during the rebalance with ILLEGAL_GENERATION). Now a reset keeps the id until
a JoinGroup sent with it is refused (UNKNOWN_MEMBER_ID), whose reset drops it as before.

Only :mod:`streams.kafka_clients` installs them, only on the aiokafka versions checked.
"""

from __future__ import annotations

import logging
from typing import Any

import aiokafka
from aiokafka.consumer import group_coordinator as _coordinator

log = logging.getLogger(__name__)

CHECKED_AIOKAFKA = ("0.14.0",)
_original: Any = None
_original_reset: Any = None
_original_join: Any = None


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
    _keep_member_id(_coordinator.GroupCoordinator, rebalance)
    return True


def _keep_member_id(coordinator: Any, rebalance: Any) -> None:
    """Resets keep the member id until a JoinGroup sent with it is refused: aiokafka resets
    once per failed partition of an offset commit, so "the second reset" cannot be it."""
    global _original_reset, _original_join
    _original_reset = coordinator.reset_generation
    _original_join = rebalance.perform_group_join

    def reset_generation(self: Any) -> None:
        member = self.member_id
        _original_reset(self)  # generation and member id reset, rejoin requested
        if member and member != self.member_id and getattr(self, "_judgeflow_tried", None
                                                            ) != member:
            self.member_id = member  # rejoin as the same member

    async def perform_group_join(self: Any) -> Any:
        coordinator = self._coordinator
        coordinator._judgeflow_tried = coordinator.member_id
        joined = await _original_join(self)
        if joined is not None:
            coordinator._judgeflow_tried = None  # in the group: later resets keep the id
        return joined

    coordinator.reset_generation = reset_generation
    rebalance.perform_group_join = perform_group_join


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

"""noida-db 0.2.3 never expires a group member that died without leaving: evict such members.

A work-around for the embedded dev broker only. Only :mod:`streams.kafka_clients` runs it,
before a worker joins a group, and only against a broker it recognised as the embedded one
(``kafka.evict_dead_members``, on by default, can turn it off there). It parses the client
id the factory gives every worker (:func:`streams.kafka_clients.client_id`).

noida-db 0.2.3 never expires a group member that died without leaving (SIGKILL, OOM,
power loss): the next member to join becomes a follower of the dead leader and re-joins
forever. Real Kafka evicts it after ``session.timeout.ms``; this module does the same job on
the embedded path. Our workers put ``<hostname>:<pid>`` in their Kafka ``client_id``; before
joining, :func:`evict_dead_members` asks the coordinator who is in the group and sends a
LeaveGroup for every member whose client id names a process on *this* host that no longer
exists. Live members, and members on other hosts, are never touched. Never point it at a
shared cluster.
"""

from __future__ import annotations

import logging
import os
import re
import socket

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.protocol.group import LeaveGroupRequest

log = logging.getLogger(__name__)
#: the ``@<host>:<pid>`` tail of :func:`streams.kafka_clients.client_id`
_TAG = re.compile(r"@(?P<host>[^:@]+):(?P<pid>\d+)$")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def dead_local_members(members: list[tuple[str, str]], host: str) -> list[str]:
    """Member ids (from ``(member_id, client_id)`` pairs) of dead processes on ``host``."""
    dead = []
    for member_id, cid in members:
        match = _TAG.search(cid)
        if match and match["host"] == host and not _pid_alive(int(match["pid"])):
            dead.append(member_id)
    return dead


async def evict_dead_members(admin: AIOKafkaAdminClient, group: str) -> int:
    """Evict ``group``'s dead local members through ``admin`` (not started yet; closed after)."""
    await admin.start()
    try:
        node = await admin.find_coordinator(group)
        described = await admin.describe_consumer_groups([group], group_coordinator_id=node)
        members: list[tuple[str, str]] = []
        for response in described:
            for g in response.groups:
                # (error_code, group, state, protocol_type, protocol, members[, ...])
                for member in g[5]:
                    members.append((member[0], member[1]))
        dead = dead_local_members(members, socket.gethostname())
        for member_id in dead:
            log.warning("group %s: evicting member %s of a process that no longer runs",
                        group, member_id)
            await admin._send_request(LeaveGroupRequest(group, member_id), node)
        return len(dead)
    finally:
        await admin.close()

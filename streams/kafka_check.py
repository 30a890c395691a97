"""What the configured principal may do on the topics and groups a role needs.

The broker says so itself (KIP-430 "authorized operations"): a Metadata request (v8) with
``include_topic_authorized_operations`` gives a bit field of the allowed operations per
topic, a DescribeGroups request (v3) the same per group; a missing topic is tried with a
validate-only CreateTopics. Nothing is read, written or created. A broker without an
authorizer (the embedded one, a dev cluster) allows everything and says so.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Literal

from aiokafka.admin import NewTopic
from aiokafka.errors import GroupAuthorizationFailedError, GroupCoordinatorNotAvailableError
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.types import Array, Boolean, Bytes, Int16, Int32, Schema, String

from streams import kafka_clients
from streams.any_broker import NODE_FAILURES
from streams.kafka_access import KafkaAccessError
from streams.kafka_acls import OPERATION_BITS, WORKERS, Acl, role_acls
from streams.settings import Settings

State = Literal["ok", "MISSING", "unknown"]
#: "authorized operations" when the broker was not asked or does not tell (INT32_MIN)
NOT_REPORTED = -(2**31)
_UNKNOWN_TOPIC, _TOPIC_DENIED, _GROUP_DENIED = 3, 29, 30
_COORDINATOR_NOT_READY = (15, 14, 16)  # not available, loading, not coordinator


class _MetadataResponseV8(Response):
    API_KEY, API_VERSION = 3, 8
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        ("brokers", Array(("node_id", Int32), ("host", String("utf-8")), ("port", Int32),
                          ("rack", String("utf-8")))),
        ("cluster_id", String("utf-8")), ("controller_id", Int32),
        ("topics", Array(("error_code", Int16), ("name", String("utf-8")),
                         ("is_internal", Boolean),
                         ("partitions", Array(("error_code", Int16), ("partition", Int32),
                                              ("leader", Int32), ("leader_epoch", Int32),
                                              ("replicas", Array(Int32)), ("isr", Array(Int32)),
                                              ("offline", Array(Int32)))),
                         ("authorized_operations", Int32))),
        ("cluster_authorized_operations", Int32))


class _MetadataRequestV8(RequestStruct):
    API_KEY, API_VERSION, RESPONSE_TYPE = 3, 8, _MetadataResponseV8
    SCHEMA = Schema(("topics", Array(String("utf-8"))), ("allow_auto_topic_creation", Boolean),
                    ("include_cluster_authorized_operations", Boolean),
                    ("include_topic_authorized_operations", Boolean))


class _Metadata(Request[_MetadataRequestV8]):
    API_KEY = 3

    def __init__(self, topics: list[str]) -> None:
        self.topics = topics

    def build(self, request_struct_class: type[_MetadataRequestV8]) -> _MetadataRequestV8:
        return request_struct_class(self.topics, False, True, True)


class _DescribeGroupsResponseV3(Response):
    API_KEY, API_VERSION = 15, 3
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        ("groups", Array(("error_code", Int16), ("group", String("utf-8")),
                         ("state", String("utf-8")), ("protocol_type", String("utf-8")),
                         ("protocol", String("utf-8")),
                         ("members", Array(("member_id", String("utf-8")),
                                           ("client_id", String("utf-8")),
                                           ("client_host", String("utf-8")),
                                           ("member_metadata", Bytes),
                                           ("member_assignment", Bytes))),
                         ("authorized_operations", Int32))))


class _DescribeGroupsRequestV3(RequestStruct):
    API_KEY, API_VERSION, RESPONSE_TYPE = 15, 3, _DescribeGroupsResponseV3
    SCHEMA = Schema(("groups", Array(String("utf-8"))),
                    ("include_authorized_operations", Boolean))


class _DescribeGroups(Request[_DescribeGroupsRequestV3]):
    API_KEY = 15

    def __init__(self, group: str) -> None:
        self.group = group

    def build(self, request_struct_class: type[_DescribeGroupsRequestV3]
              ) -> _DescribeGroupsRequestV3:
        return request_struct_class([self.group], True)


@dataclass(frozen=True)
class Finding:
    acl: Acl
    state: State
    note: str = ""

    def line(self, role: str) -> str:
        a = self.acl
        note = f"  ({self.note})" if self.note else ""
        return (f"{role:<14} {a.resource:<5} {shown_name(a):<44} {a.operation:<9} "
                f"{self.state}{note}")


def shown_name(a: Acl) -> str:
    """The resource name as the tables show it: a prefixed ACL with a trailing ``*``."""
    return a.name + "*" if a.pattern == "prefixed" else a.name


def _allowed(ops: int, operation: str) -> State:
    if ops == NOT_REPORTED:
        return "unknown"
    return "ok" if ops & (1 << OPERATION_BITS[operation]) else "MISSING"


async def check(settings: Settings, role: str, acls: list[Acl] | None = None
                ) -> list[Finding]:
    """One finding per ACL ``role`` needs (see :mod:`streams.kafka_acls`), or per ACL of
    ``acls`` (what one command of the role needs)."""
    acls = role_acls(role, settings) if acls is None else acls
    broker = await kafka_clients.connect(settings.kafka)
    if broker.embedded is not None:
        return [Finding(a, "ok", f"{broker.embedded} has no authorizer") for a in acls]
    admin = kafka_clients.admin(settings.kafka)
    await admin.start()
    try:
        topics = sorted({a.name for a in acls if a.resource == "topic"})
        meta = await admin._send_request(_Metadata(topics))
        # (error_code, name, is_internal, partitions, authorized_operations)
        by_topic = {t[1]: (t[0], t[4]) for t in meta.topics}
        creatable = await _creatable(admin, [n for n, (e, _) in by_topic.items()
                                             if e in (_UNKNOWN_TOPIC, _TOPIC_DENIED)
                                             and n in {a.name for a in acls
                                                       if a.operation == "Create"}], settings)
        groups = {a.name: await _group_ops(admin, group_probe(a))
                  for a in acls if a.resource == "group"}
    finally:
        await admin.close()
    return [_topic_finding(a, by_topic, creatable) if a.resource == "topic"
            else _group_finding(a, groups[a.name]) for a in acls]


def group_probe(a: Acl) -> str:
    """The group asked about for ``a``: a prefixed ACL by one name under its prefix."""
    return a.name + "kafka-check" if a.pattern == "prefixed" else a.name


#: what a validate-only CreateTopics said of a topic the Metadata did not describe
_CREATED_OK, _EXISTS = 0, 36
_HIDDEN = "cannot be described (no Describe ACL: Read or Write grant it)"


def _topic_finding(a: Acl, by_topic: dict[str, tuple[int, int]], creatable: dict[str, int]
                   ) -> Finding:
    error, ops = by_topic.get(a.name, (_TOPIC_DENIED, 0))
    if a.operation == "Create" and error in (_TOPIC_DENIED, _UNKNOWN_TOPIC):
        code = creatable.get(a.name, _TOPIC_DENIED)
        if code == _EXISTS:  # Create granted (checked first), the topic is there
            return Finding(a, "ok", f"exists but {_HIDDEN}")
        if error == _TOPIC_DENIED and code != _CREATED_OK:
            return Finding(a, "MISSING", _HIDDEN)  # Kafka hides whether it exists
        return Finding(a, "ok" if code == _CREATED_OK else "MISSING", "topic not created yet")
    if error == _TOPIC_DENIED:
        return Finding(a, "MISSING", _HIDDEN)
    if error == _UNKNOWN_TOPIC:
        if a.operation == "Describe":
            return Finding(a, "ok", "topic does not exist yet")
        return Finding(a, "unknown", "topic does not exist yet")
    if error != 0:
        return Finding(a, "unknown", f"broker error {error}")
    return Finding(a, _allowed(ops, a.operation))


async def topic_denied(settings: Settings, topic: str) -> bool:
    """Whether the broker refuses to describe ``topic`` to this principal (error 29: no
    Describe, so no Read or Write either; Kafka then hides whether the topic exists)."""
    if (await kafka_clients.connect(settings.kafka)).embedded is not None:
        return False  # no authorizer
    admin = kafka_clients.admin(settings.kafka)
    try:
        await admin.start()
        meta = await admin._send_request(_Metadata([topic]))
    finally:
        await admin.close()
    return any(t[1] == topic and t[0] == _TOPIC_DENIED for t in meta.topics)


def _group_finding(a: Acl, found: tuple[int, int]) -> Finding:
    error, ops = found
    if error == _GROUP_DENIED:
        return Finding(a, "MISSING", "not even Describe")
    if error != 0:
        return Finding(a, "unknown", f"broker error {error}")
    return Finding(a, _allowed(ops, a.operation))


async def _creatable(admin: Any, names: list[str], settings: Settings) -> dict[str, int]:
    """topic -> the error code a validate-only CreateTopics gives it (0: may create it)."""
    if not names:
        return {}
    new = [NewTopic(name=n, num_partitions=settings.kafka.partitions,
                    replication_factor=settings.kafka.replication_factor) for n in names]
    response = await admin.create_topics(new, validate_only=True)
    return {topic: code for topic, code, *_ in response.topic_errors}


#: How long a group's coordinator is waited for: a new cluster creates its offsets topic on
#: first use; a crashed coordinator is replaced once its broker session expires (9 s).
COORDINATOR_WAIT_SECONDS = 30.0


async def _group_ops(admin: Any, group: str) -> tuple[int, int]:
    """(error code, authorized operations) of ``group``, waiting for its coordinator (not
    available yet, or unreachable: left "unknown" after :data:`COORDINATOR_WAIT_SECONDS`)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + COORDINATOR_WAIT_SECONDS
    while loop.time() < deadline:
        try:
            node = await admin.find_coordinator(group)
        except GroupAuthorizationFailedError:  # FindCoordinator needs Describe on the group
            return _GROUP_DENIED, 0
        except GroupCoordinatorNotAvailableError:
            await asyncio.sleep(0.2)
            continue
        try:
            response = await admin._send_request(_DescribeGroups(group), node)
        except NODE_FAILURES:  # a crashed coordinator, until its session expires
            await asyncio.sleep(0.2)
            continue
        g = response.groups[0]  # (error_code, group, state, type, protocol, members, operations)
        if g[0] not in _COORDINATOR_NOT_READY:
            return g[0], g[6]
        await asyncio.sleep(0.2)
    return _COORDINATOR_NOT_READY[0], NOT_REPORTED


def _named(a: Acl) -> str:
    return f"{a.operation} on {a.resource} {shown_name(a)}"


async def require(settings: Settings, role: str, acls: list[Acl] | None = None) -> None:
    """Stop a worker or command at start, in one line, when its principal lacks an ACL it
    needs (every ACL of ``role``, or ``acls``: what this command of the role needs)."""
    missing = [f for f in await check(settings, role, acls) if f.state == "MISSING"]
    if missing:
        shown = ", ".join(_named(f.acl) for f in missing[:3])
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        who = "worker" if role in WORKERS else "command"
        raise KafkaAccessError(f"the {role} {who}'s principal lacks {len(missing)} ACL(s): "
                               f"{shown}{more} (see `judgeflow kafka check --role {role}`)")

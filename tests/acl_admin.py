"""Granting and revoking ACLs from a test in one round trip (CreateAcls/DeleteAcls through the
harness's PLAINTEXT listener, a super user), instead of one JVM start per ``kafka-acls`` call."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from aiokafka.errors import for_code
from aiokafka.protocol.admin import CreateAclsRequest, DeleteAclsRequest

from streams import kafka_clients
from streams.kafka_acls import OPERATION_BITS, Acl

RESOURCE_TYPES = {"topic": 2, "group": 3}
PATTERNS = {"literal": 3, "prefixed": 4}
ALLOW = 3


async def _send(bootstrap: str, requests: list[object]) -> None:
    admin = kafka_clients.admin(bootstrap)
    await admin.start()
    try:
        for request in requests:
            response = await admin._send_request(request)
            results = getattr(response, "creation_responses", None) or \
                getattr(response, "filter_responses", ())
            for result in results:
                if result[0]:
                    raise for_code(result[0])(result[1])
    finally:
        await admin.close()


def _args(principal: str, a: Acl) -> tuple[int, str, int, str, str, int, int]:
    return (RESOURCE_TYPES[a.resource], a.name, PATTERNS[a.pattern], principal, "*",
            OPERATION_BITS[a.operation], ALLOW)


def grant(bootstrap: str, principal: str, acls: Iterable[Acl]) -> None:
    asyncio.run(_send(bootstrap, [CreateAclsRequest(*_args(principal, a)) for a in acls]))


def revoke(bootstrap: str, principal: str, acls: Iterable[Acl]) -> None:
    asyncio.run(_send(bootstrap, [DeleteAclsRequest(*_args(principal, a)) for a in acls]))

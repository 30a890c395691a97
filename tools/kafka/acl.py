"""``kafka-acls`` (``org.apache.kafka.tools.AclCommand``) arguments from keyword arguments, so a
test says ``add_acl("User:alice", ["Read"], topic="t", group="g")``."""

from __future__ import annotations

from collections.abc import Sequence

RESOURCES = {"topic": "--topic", "group": "--group", "transactional_id": "--transactional-id"}


def arguments(principal: str, operations: Sequence[str], *, topic: str | None = None,
              group: str | None = None, transactional_id: str | None = None,
              cluster: bool = False, prefixed: bool = False, deny: bool = False,
              host: str = "*") -> list[str]:
    if not principal.startswith("User:"):
        raise ValueError(f"a principal looks like 'User:alice', not {principal!r}")
    if not operations:
        raise ValueError("name at least one operation")
    named = {"topic": topic, "group": group, "transactional_id": transactional_id}
    if not cluster and not any(named.values()):
        raise ValueError("name a topic, group, transactional_id or cluster=True")
    who = "--deny-principal" if deny else "--allow-principal"
    args = [who, principal, "--deny-host" if deny else "--allow-host", host]
    for op in operations:
        args += ["--operation", op]
    for key, value in named.items():
        if value:
            args += [RESOURCES[key], value]
    if cluster:
        args.append("--cluster")
    if prefixed:
        args += ["--resource-pattern-type", "prefixed"]
    return args

"""``judgeflow kafka acls --format kafka-acls``: the ACL list (:mod:`streams.kafka_acls`) as
``kafka-acls.sh --add`` command lines, for clusters without Strimzi (Amazon MSK with SCRAM or
mutual TLS, Confluent Platform, plain Apache Kafka)."""

from __future__ import annotations

import shlex
from collections.abc import Iterable

from streams.exit_codes import CommandError, ExitCode
from streams.kafka_acls import Acl, role_acls
from streams.settings import Settings


def kafka_acls_commands(settings: Settings, roles: list[str], principal: str,
                        command_config: str) -> list[str]:
    """Command lines adding exactly the ACLs of :func:`role_acls` for ``roles``,
    ``principal`` with ``{role}`` replaced by each role."""
    if "{role}" not in principal:
        raise CommandError(f"--principal {principal!r} must contain {{role}} (each role is "
                           "its own principal)", ExitCode.USAGE)
    return [line for role in roles for line in acl_command_lines(
        settings.kafka.bootstrap_servers, command_config, principal.replace("{role}", role),
        role_acls(role, settings))]


def acl_command_lines(bootstrap: str, command_config: str, principal: str,
                      acls: Iterable[Acl]) -> list[str]:
    """One ``kafka-acls.sh --add`` line per resource (and pattern type) of ``acls``, its
    operations repeated, names shell-quoted."""
    by_resource: dict[tuple[str, str, str], list[str]] = {}
    for a in acls:
        # an ACL on a name prefix (a family of groups) is "prefixed"; literal otherwise
        pattern = getattr(a, "pattern", "literal")
        by_resource.setdefault((a.resource, a.name, pattern), []).append(a.operation)
    return [shlex.join(["kafka-acls.sh", "--bootstrap-server", bootstrap, "--command-config",
                        command_config, "--add", "--allow-principal", principal,
                        "--allow-host", "*", *[w for op in ops for w in ("--operation", op)],
                        f"--{kind}", name, "--resource-pattern-type", pattern])
            for (kind, name, pattern), ops in by_resource.items()]

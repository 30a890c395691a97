"""``server.properties`` for one node of a test KRaft cluster (a pure function: no files, no
processes), so what the launcher runs is table-testable.

Every node is a combined broker + controller. Listeners, all on 127.0.0.1:

* ``PLAINTEXT`` — the clients' listener; principal ``User:ANONYMOUS``, a super user.
* ``PROXIED`` (proxied clusters) — PLAINTEXT again, but advertised on a loopback TCP proxy's
  port, so a test can cut the clients that use it off while its own clients keep working.
* ``INTERNAL`` — replication between brokers (never proxied: cutting clients off must not
  stop replication).
* ``CONTROLLER`` — the KRaft quorum (static voters).
* ``SASL_SSL`` (secure clusters) — SCRAM-SHA-256, SCRAM-SHA-512 and PLAIN over TLS.
* ``SSL`` (secure clusters) — mutual TLS, client certificate required; ``CN=alice`` is
  ``User:alice``.
* ``OAUTH`` (secure clusters with ``oauth``) — SASL_SSL with OAUTHBEARER only, validated by
  Kafka's *unsecured* validator (an unsigned JWT's ``sub`` is the principal): for tests of the
  client's OAUTHBEARER path only, never a production setup.

Secure clusters turn on ``StandardAuthorizer`` with the admin principal (and ANONYMOUS, the
PLAINTEXT/internal listeners' principal) as super users; everyone else needs ACLs.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

SCRAM_MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512")
SASL_MECHANISMS = (*SCRAM_MECHANISMS, "PLAIN")


@dataclass(frozen=True)
class NodePorts:
    plaintext: int
    internal: int
    controller: int
    sasl_ssl: int = 0
    ssl: int = 0
    #: The PROXIED listener's own port and the proxy port advertised for it (0: none).
    proxied: int = 0
    proxy: int = 0
    oauth: int = 0


@dataclass(frozen=True)
class Security:
    """What a secure cluster needs in its config: the CA, the brokers' key store, and the
    users (name -> password) the PLAIN mechanism knows (SCRAM users live in the metadata)."""

    ca_file: Path
    keystore: Path
    admin: str
    users: Mapping[str, str]
    #: an OAUTH listener too (the nodes' ports name it)
    oauth: bool = False


def _jaas_plain(users: Mapping[str, str]) -> str:
    entries = " ".join(f'user_{name}="{pw}"' for name, pw in sorted(users.items()))
    return f"org.apache.kafka.common.security.plain.PlainLoginModule required {entries};"


def server_properties(node_id: int, ports: Mapping[int, NodePorts], log_dir: Path, *,
                      message_max_bytes: int | None = None,
                      security: Security | None = None,
                      extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The properties of node ``node_id`` of the cluster whose nodes' ports are ``ports``."""
    me = ports[node_id]
    n = len(ports)
    listeners = {"PLAINTEXT": me.plaintext, "INTERNAL": me.internal,
                 "CONTROLLER": me.controller}
    protocols = {"PLAINTEXT": "PLAINTEXT", "INTERNAL": "PLAINTEXT", "CONTROLLER": "PLAINTEXT"}
    advertised = {"PLAINTEXT": me.plaintext, "INTERNAL": me.internal}
    if me.proxied:
        listeners["PROXIED"] = me.proxied
        protocols["PROXIED"] = "PLAINTEXT"
        advertised["PROXIED"] = me.proxy
    if security is not None:
        listeners |= {"SASL_SSL": me.sasl_ssl, "SSL": me.ssl}
        protocols |= {"SASL_SSL": "SASL_SSL", "SSL": "SSL"}
        advertised |= {"SASL_SSL": me.sasl_ssl, "SSL": me.ssl}
        if security.oauth:
            listeners["OAUTH"] = advertised["OAUTH"] = me.oauth
            protocols["OAUTH"] = "SASL_SSL"
    props = {
        "process.roles": "broker,controller",
        "node.id": str(node_id),
        "controller.quorum.voters": ",".join(
            f"{i}@127.0.0.1:{p.controller}" for i, p in sorted(ports.items())),
        "listeners": ",".join(f"{k}://127.0.0.1:{v}" for k, v in listeners.items()),
        "advertised.listeners": ",".join(f"{k}://127.0.0.1:{v}" for k, v in advertised.items()),
        "listener.security.protocol.map": ",".join(f"{k}:{v}" for k, v in protocols.items()),
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "INTERNAL",
        "log.dirs": str(log_dir),
        "num.partitions": "1",
        "default.replication.factor": str(n),
        "min.insync.replicas": str(min(2, n)),
        "offsets.topic.replication.factor": str(n),
        "offsets.topic.num.partitions": "8",
        "transaction.state.log.replication.factor": str(n),
        "transaction.state.log.min.isr": str(min(2, n)),
        "transaction.state.log.num.partitions": "4",
        "share.coordinator.state.topic.replication.factor": str(n),
        "share.coordinator.state.topic.min.isr": str(min(2, n)),
        "group.initial.rebalance.delay.ms": "0",
        # A killed node's replicas leave the ISR quickly, so a failover test waits seconds.
        "replica.lag.time.max.ms": "5000",
        "broker.session.timeout.ms": "6000",
        "broker.heartbeat.interval.ms": "1000",
        "log.segment.bytes": str(64 * 1024 * 1024),
        "log.retention.check.interval.ms": "3600000",
        "auto.create.topics.enable": "true",
    }
    if message_max_bytes is not None:
        props["message.max.bytes"] = str(message_max_bytes)
        # Followers must be able to fetch (and the log hold) the largest record batch.
        props["replica.fetch.max.bytes"] = str(message_max_bytes)
        props["replica.fetch.response.max.bytes"] = str(max(message_max_bytes, 10 * 2**20))
        props["socket.request.max.bytes"] = str(max(message_max_bytes * 2, 100 * 2**20))
    if security is not None:
        props |= {
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": f"User:ANONYMOUS;User:{security.admin}",
            "allow.everyone.if.no.acl.found": "false",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(security.ca_file),
            "ssl.keystore.type": "PEM",
            "ssl.keystore.location": str(security.keystore),
            "ssl.principal.mapping.rules": "RULE:^CN=([^,]+)$/$1/,RULE:^CN=([^,]+),.*$/$1/,DEFAULT",
            "listener.name.ssl.ssl.client.auth": "required",
            "listener.name.sasl_ssl.ssl.client.auth": "none",
            "sasl.enabled.mechanisms": ",".join(SASL_MECHANISMS),
            "listener.name.sasl_ssl.plain.sasl.jaas.config": _jaas_plain(security.users),
        }
        for mech in SCRAM_MECHANISMS:
            props[f"listener.name.sasl_ssl.{mech.lower()}.sasl.jaas.config"] = (
                "org.apache.kafka.common.security.scram.ScramLoginModule required;")
        if security.oauth:
            props |= _oauth_listener(security.admin)
    props |= dict(extra or {})
    return props


def _oauth_listener(admin: str) -> dict[str, str]:
    # No server callback handler configured: OAUTHBEARER's default is the unsecured validator
    # (OAuthBearerUnsecuredValidatorCallbackHandler). The broker's own login is unused (no
    # broker talks OAUTH to another) but must be configured; it claims the admin.
    return {
        "listener.name.oauth.sasl.enabled.mechanisms": "OAUTHBEARER",
        "listener.name.oauth.ssl.client.auth": "none",
        "listener.name.oauth.oauthbearer.sasl.jaas.config": (
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            f'unsecuredLoginStringClaim_sub="{admin}";'),
    }


def unsecured_jwt(sub: str, *, issued_at: int, lifetime: int = 3600) -> str:
    """An unsigned JWT (``alg: none``) for the OAUTH listener's unsecured validator, which
    wants ``sub`` (the principal) and ``exp``."""
    def part(obj: Mapping[str, object]) -> str:
        raw = json.dumps(obj, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    claims = {"sub": sub, "iat": issued_at, "exp": issued_at + lifetime}
    return f"{part({'alg': 'none'})}.{part(claims)}."


def render(props: Mapping[str, str]) -> str:
    return "".join(f"{k}={v}\n" for k, v in props.items())

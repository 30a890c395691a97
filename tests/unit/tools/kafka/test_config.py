"""The test cluster's server.properties and ACL arguments, as data."""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from pathlib import Path

import pytest

from tools.kafka.acl import arguments
from tools.kafka.config import NodePorts, Security, render, server_properties, unsecured_jwt

PORTS = {1: NodePorts(9001, 9002, 9003, 9004, 9005), 2: NodePorts(9011, 9012, 9013, 9014, 9015),
         3: NodePorts(9021, 9022, 9023, 9024, 9025, proxied=9026, proxy=9027)}
SEC = Security(Path("/ca.crt"), Path("/broker.pem"), "admin", {"admin": "a", "alice": "b"})


def test_three_nodes_size_replication_to_the_cluster() -> None:
    p = server_properties(2, PORTS, Path("/d"))
    assert p["node.id"] == "2"
    assert p["controller.quorum.voters"] == "1@127.0.0.1:9003,2@127.0.0.1:9013,3@127.0.0.1:9023"
    assert p["offsets.topic.replication.factor"] == "3"
    assert p["transaction.state.log.min.isr"] == p["min.insync.replicas"] == "2"
    assert p["group.initial.rebalance.delay.ms"] == "0"
    assert p["inter.broker.listener.name"] == "INTERNAL"
    assert "SSL" not in p["listeners"] and "authorizer.class.name" not in p


def test_one_node_keeps_min_isr_at_one() -> None:
    p = server_properties(1, {1: PORTS[1]}, Path("/d"))
    assert p["offsets.topic.replication.factor"] == p["min.insync.replicas"] == "1"


def test_secure_listeners_authorizer_and_mtls() -> None:
    p = server_properties(1, PORTS, Path("/d"), security=SEC)
    assert "SASL_SSL://127.0.0.1:9004" in p["listeners"]
    assert "SSL://127.0.0.1:9005" in p["advertised.listeners"]
    assert p["listener.name.ssl.ssl.client.auth"] == "required"
    assert p["super.users"] == "User:ANONYMOUS;User:admin"
    assert p["ssl.keystore.type"] == p["ssl.truststore.type"] == "PEM"
    assert 'user_alice="b"' in p["listener.name.sasl_ssl.plain.sasl.jaas.config"]
    assert "ScramLoginModule" in p["listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config"]


def test_proxied_listener_advertises_the_proxy() -> None:
    p = server_properties(3, PORTS, Path("/d"))
    assert "PROXIED://127.0.0.1:9026" in p["listeners"]
    assert "PROXIED://127.0.0.1:9027" in p["advertised.listeners"]
    assert "PROXIED:PLAINTEXT" in p["listener.security.protocol.map"]


def test_message_max_raises_replica_fetch_too() -> None:
    p = server_properties(1, PORTS, Path("/d"), message_max_bytes=5 * 2**20, extra={"x": "y"})
    assert p["message.max.bytes"] == p["replica.fetch.max.bytes"] == str(5 * 2**20)
    assert render(p).endswith("x=y\n")


def test_acl_arguments() -> None:
    assert arguments("User:a", ["Read", "Describe"], topic="t", group="g", prefixed=True) == [
        "--allow-principal", "User:a", "--allow-host", "*", "--operation", "Read",
        "--operation", "Describe", "--topic", "t", "--group", "g",
        "--resource-pattern-type", "prefixed"]
    assert arguments("User:a", ["Create"], cluster=True, deny=True)[:4] == [
        "--deny-principal", "User:a", "--deny-host", "*"]


@pytest.mark.parametrize("kwargs", [{"principal": "alice", "operations": ["Read"], "topic": "t"},
                                    {"principal": "User:a", "operations": [], "topic": "t"},
                                    {"principal": "User:a", "operations": ["Read"]}])
def test_acl_arguments_refuse_what_kafka_would(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        arguments(**kwargs)  # type: ignore[arg-type]


def test_oauth_listener_takes_only_oauthbearer_with_the_unsecured_validator() -> None:
    ports = {1: NodePorts(9001, 9002, 9003, 9004, 9005, oauth=9006)}
    p = server_properties(1, ports, Path("/d"), security=replace(SEC, oauth=True))
    assert "OAUTH://127.0.0.1:9006" in p["listeners"].split(",")
    assert "OAUTH:SASL_SSL" in p["listener.security.protocol.map"].split(",")
    assert p["listener.name.oauth.sasl.enabled.mechanisms"] == "OAUTHBEARER"
    assert "OAUTHBEARER" not in p["sasl.enabled.mechanisms"]  # the SCRAM listener unchanged
    assert not any("callback.handler" in key for key in p)  # Kafka's default: unsecured
    assert "OAUTH" not in server_properties(1, ports, Path("/d"), security=SEC)["listeners"]


def test_unsecured_jwt_claims_the_principal_until_it_expires() -> None:
    header, claims, signature = unsecured_jwt("alice", issued_at=100, lifetime=60).split(".")
    def decode(part: str) -> object:
        return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    assert decode(header) == {"alg": "none"} and signature == ""
    assert decode(claims) == {"sub": "alice", "iat": 100, "exp": 160}

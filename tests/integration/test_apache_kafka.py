"""The Apache Kafka test launcher itself (tools/kafka): SCRAM and PLAIN over TLS, mutual TLS,
ACLs that take effect and go away, a node killed and started again, nothing left running."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaConnectionError, KafkaError, TopicAuthorizationFailedError
from aiokafka.helpers import create_ssl_context

from tests.kafka import apache_kafka_or_skip
from tools.kafka import ApacheKafka


@pytest.fixture(scope="module")
def secure() -> Iterator[ApacheKafka]:
    with apache_kafka_or_skip(secure=True, users={"alice": "alice-pw"}) as k:
        yield k


async def _send(bootstrap: str, topic: str, **kw: Any) -> int:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, request_timeout_ms=8000, **kw)
    await producer.start()
    try:
        return (await producer.send_and_wait(topic, b"x")).offset
    finally:
        await producer.stop()


def send(bootstrap: str, topic: str, **kw: Any) -> int:
    return asyncio.run(asyncio.wait_for(_send(bootstrap, topic, **kw), 30))


def sasl(k: ApacheKafka, user: str, pw: str, mech: str) -> dict[str, Any]:
    return {"security_protocol": "SASL_SSL", "sasl_mechanism": mech, "sasl_plain_username": user,
            "sasl_plain_password": pw, "ssl_context": create_ssl_context(cafile=str(k.ca_file))}


@pytest.mark.parametrize("mech", ["SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"])
def test_sasl_ssl_admin_writes(secure: ApacheKafka, mech: str) -> None:
    assert send(secure.bootstrap_for("SASL_SSL"), "admin-topic",
                **sasl(secure, secure.admin_user, secure.admin_password, mech)) >= 0


def test_acl_grants_and_removal_revokes(secure: ApacheKafka) -> None:
    alice = sasl(secure, "alice", "alice-pw", "SCRAM-SHA-512")
    send(secure.bootstrap, "acl-topic")  # exists (PLAINTEXT is the harness's super user)
    with pytest.raises(TopicAuthorizationFailedError):
        send(secure.bootstrap_for("SASL_SSL"), "acl-topic", **alice)
    secure.add_acl("User:alice", ["Write", "Describe"], topic="acl-topic")
    assert send(secure.bootstrap_for("SASL_SSL"), "acl-topic", **alice) >= 1
    secure.remove_acl("User:alice", ["Write", "Describe"], topic="acl-topic")
    assert "alice" not in secure.list_acls()


def test_wrong_password_and_missing_client_cert_are_refused(secure: ApacheKafka) -> None:
    with pytest.raises(KafkaError):
        send(secure.bootstrap_for("SASL_SSL"), "t", **sasl(secure, "alice", "nope", "PLAIN"))
    no_cert = create_ssl_context(cafile=str(secure.ca_file))
    with pytest.raises(KafkaConnectionError):
        send(secure.bootstrap_for("SSL"), "t", security_protocol="SSL", ssl_context=no_cert)


def test_mutual_tls_principal_is_the_certificate_cn(secure: ApacheKafka) -> None:
    cert = secure.client_cert("mtls-user")
    ctx = create_ssl_context(cafile=str(secure.ca_file), certfile=str(cert.cert),
                             keyfile=str(cert.key))
    send(secure.bootstrap, "mtls-topic")
    with pytest.raises(TopicAuthorizationFailedError):
        send(secure.bootstrap_for("SSL"), "mtls-topic", security_protocol="SSL", ssl_context=ctx)
    secure.add_acl("User:mtls-user", ["Write"], topic="mtls-", prefixed=True)
    assert send(secure.bootstrap_for("SSL"), "mtls-topic", security_protocol="SSL",
                ssl_context=ctx) >= 1


def test_scram_user_added_on_the_running_cluster(secure: ApacheKafka) -> None:
    secure.add_scram_user("carol", "carol-pw")
    secure.add_acl("User:carol", ["Write"], topic="carol-topic")
    send(secure.bootstrap, "carol-topic")
    assert send(secure.bootstrap_for("SASL_SSL"), "carol-topic",
                **sasl(secure, "carol", "carol-pw", "SCRAM-SHA-256")) >= 1


def test_kill_and_start_a_node_then_nothing_left_running() -> None:
    with apache_kafka_or_skip() as k:
        send(k.bootstrap, "t")
        pid = k.pids()[0]
        k.kill(0)
        assert not k.pids()
        k.start(0)
        assert send(k.bootstrap, "t") == 1  # same data directory: the first record is kept
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    assert not k.pids()

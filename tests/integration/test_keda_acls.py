"""KEDA's Kafka scaler needs exactly the ACLs deploy/k8s/strimzi/keda-user.yaml grants, proven
on Apache Kafka with the StandardAuthorizer: as that user over SASL_SSL (SCRAM-SHA-512, the
test CA), the requests the scaler sends (Metadata and ListOffsets on the topic,
FindCoordinator and OffsetFetch on the group: KEDA's pkg/scalers/kafka_scaler.go) give the
group's lag; without the group's or the topic's Describe they are refused. One ACL is added
with a line ``judgeflow kafka acls --format kafka-acls`` would print, run through the real
kafka-acls tool (AclCommand), so its syntax is what Kafka takes."""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from aiokafka import TopicPartition
from aiokafka.errors import GroupAuthorizationFailedError, TopicAuthorizationFailedError

from cli.kafka_acls_commands import acl_command_lines
from streams import kafka_clients
from streams.kafka_acls import Acl
from streams.kafka_settings import KafkaSettings
from tests.acl_admin import grant, revoke
from tests.kafka import apache_kafka_or_skip
from tools.kafka import ApacheKafka
from tools.kafka.java import run_tool

pytestmark = pytest.mark.integration
KEDA_USER = Path(__file__).resolve().parents[2] / "deploy" / "k8s" / "strimzi" / "keda-user.yaml"
USER, PASSWORD = "judgeflow-keda", "keda-pw"
PRINCIPAL = f"User:{USER}"


def keda_acls() -> list[Acl]:
    (user,) = [d for d in yaml.safe_load_all(KEDA_USER.read_text()) if d]
    assert user["metadata"]["name"] == USER
    return [Acl(a["resource"]["type"], a["resource"]["name"], op, "keda")
            for a in user["spec"]["authorization"]["acls"] for op in a["operations"]]


@pytest.fixture(scope="module")
def kafka() -> Iterator[ApacheKafka]:
    with apache_kafka_or_skip(secure=True, users={USER: PASSWORD}) as k:
        yield k


@pytest.fixture(scope="module")
def watched(kafka: ApacheKafka) -> tuple[str, str]:
    """The judge trigger's topic with 7 records on 2 partitions, its group committed at 2 on
    partition 0 (so the lag is 5), made as the super user; the KEDA user's ACLs granted, one
    of them by a kafka-acls command line."""
    acls = keda_acls()
    (topic,) = [a.name for a in acls if a.resource == "topic" and "judge" in a.name]
    (group,) = [a.name for a in acls if a.resource == "group" and a.name.endswith("judge")]

    async def setup() -> None:
        admin = kafka_clients.admin(kafka.bootstrap)
        await admin.start()
        try:
            from aiokafka.admin import NewTopic

            await admin.create_topics([NewTopic(topic, 2, 1)])
        finally:
            await admin.close()
        producer = kafka_clients.producer(kafka.bootstrap)
        await producer.start()
        try:
            for i in range(7):
                await producer.send_and_wait(topic, f"job-{i}".encode(), partition=i % 2)
        finally:
            await producer.stop()
        consumer = kafka_clients.consumer(kafka.bootstrap, group_id=group,
                                          enable_auto_commit=False)
        await consumer.start()
        try:
            consumer.assign([TopicPartition(topic, 0)])
            await consumer.commit({TopicPartition(topic, 0): 2})
        finally:
            await consumer.stop()

    asyncio.run(setup())
    first, *rest = [a for a in acls if (a.resource, a.name) == ("topic", topic)] + \
        [a for a in acls if (a.resource, a.name) != ("topic", topic)]
    (line,) = acl_command_lines(kafka.bootstrap, "unused", PRINCIPAL, [first])
    words = shlex.split(line)
    assert words[0] == "kafka-acls.sh"
    i = words.index("--command-config")  # the harness's PLAINTEXT listener is a super user
    run_tool("org.apache.kafka.tools.AclCommand", words[1:i] + words[i + 2:])
    assert f"principal={PRINCIPAL}" in kafka.list_acls()
    grant(kafka.bootstrap, PRINCIPAL, rest)
    return topic, group


def as_keda(k: ApacheKafka) -> KafkaSettings:
    return KafkaSettings(bootstrap_servers=k.bootstrap_for("SASL_SSL"),
                         security_protocol="SASL_SSL", sasl_mechanism="SCRAM-SHA-512",
                         sasl_username=USER, sasl_password=PASSWORD, ssl_cafile=k.ca_file,
                         broker="kafka")


async def lag_as_keda(k: ApacheKafka, topic: str, group: str) -> int:
    """What KEDA's scaler computes, with its requests: Metadata (the topic's partitions),
    FindCoordinator + OffsetFetch (the group's committed offsets), ListOffsets (the ends)."""
    s = as_keda(k)
    admin = kafka_clients.admin(s)
    await admin.start()
    try:
        (described,) = await admin.describe_topics([topic])
        if described["error_code"] == TopicAuthorizationFailedError.errno:
            raise TopicAuthorizationFailedError(topic)
        tps = [TopicPartition(topic, p["partition"]) for p in described["partitions"]]
        committed = await admin.list_consumer_group_offsets(group, partitions=tps)
    finally:
        await admin.close()
    consumer = kafka_clients.consumer(s, group_id=None, enable_auto_commit=False)
    await consumer.start()
    try:
        ends = await consumer.end_offsets(tps)
    finally:
        await consumer.stop()
    return sum(ends[tp] - max(committed[tp].offset, 0) for tp in tps)


def test_the_keda_user_reads_the_lag_with_only_describe(kafka: ApacheKafka,
                                                        watched: tuple[str, str]) -> None:
    topic, group = watched
    assert {a.operation for a in keda_acls()} == {"Describe"}
    assert asyncio.run(lag_as_keda(kafka, topic, group)) == 7 - 2


@pytest.mark.parametrize(("resource", "refused"), [
    ("group", GroupAuthorizationFailedError), ("topic", TopicAuthorizationFailedError)])
def test_each_describe_is_needed(kafka: ApacheKafka, watched: tuple[str, str], resource: str,
                                 refused: type[Exception]) -> None:
    topic, group = watched
    (acl,) = [a for a in keda_acls() if (a.resource, a.name) == (
        resource, group if resource == "group" else topic)]
    revoke(kafka.bootstrap, PRINCIPAL, [acl])
    try:
        with pytest.raises(refused):
            asyncio.run(lag_as_keda(kafka, topic, group))
    finally:
        grant(kafka.bootstrap, PRINCIPAL, [acl])
    assert asyncio.run(lag_as_keda(kafka, topic, group)) == 5

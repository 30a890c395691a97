"""Where ``judgeflow demo`` runs (tools/demo/target.py): its own broker unless Kafka settings
point it at a cluster; there, every topic and group under the run's prefix."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import cli.demo
from agents.settings import Settings
from cli.main import main
from streams.kafka_settings import KafkaSettings
from streams.topics import all_topics
from tools.demo.run import demo_settings
from tools.demo.target import KINDS, choose, own_broker_kafka, pointed, prefixed, run_prefix

SASL = {"bootstrap_servers": "kafka-1:9093", "security_protocol": "SASL_SSL",
        "sasl_mechanism": "SCRAM-SHA-512", "sasl_username": "u", "sasl_password": "p"}


@pytest.mark.parametrize("given, requested, chosen", [
    ({}, None, "embedded"),
    ({"bootstrap_servers": "kafka-1:9092"}, None, "cluster"),
    (SASL, None, "cluster"),
    ({"broker": "kafka"}, None, "cluster"),  # "it is Apache Kafka" points at the default one
    ({"partitions": 8, "producer_linger_ms": 5}, None, "embedded"),  # not where, only how
    (SASL, "embedded", "embedded"),
    ({}, "apache", "apache"),
    ({}, "cluster", "cluster"),
])
def test_kafka_settings_given_point_the_demo_at_that_cluster(
        given: dict[str, object], requested: str | None, chosen: str) -> None:
    assert choose(requested, KafkaSettings(**given)) == chosen  # type: ignore[arg-type]


def test_pointed_names_the_settings_by_their_environment_names() -> None:
    assert pointed(KafkaSettings(**SASL)) == [  # type: ignore[arg-type]
        "JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS", "JUDGEFLOW_KAFKA__SECURITY_PROTOCOL",
        "JUDGEFLOW_KAFKA__SASL_MECHANISM", "JUDGEFLOW_KAFKA__SASL_USERNAME",
        "JUDGEFLOW_KAFKA__SASL_PASSWORD"]


def test_a_broker_of_its_own_gets_no_credentials_but_keeps_the_other_settings() -> None:
    k = own_broker_kafka(KafkaSettings(**SASL, broker="kafka", partitions=8),  # type: ignore[arg-type]
                         "127.0.0.1:4000")
    assert k.bootstrap_servers == "127.0.0.1:4000" and k.security_protocol == "PLAINTEXT"
    assert k.sasl_mechanism is None and k.sasl_password is None and k.broker == "auto"
    assert k.partitions == 8


def test_every_topic_and_group_falls_under_the_prefix(tmp_path: Path) -> None:
    prefix = run_prefix()
    assert re.fullmatch(r"judgeflow-demo-\d{8}-\d{6}-[0-9a-f]{4}\.", prefix)
    s = prefixed(Settings(), prefix)
    names = [*all_topics(s), s.topics.detect_ticks, s.topics.replay_batches,
             *(getattr(s.groups, n) for n in type(s.groups).model_fields)]
    assert all(n.startswith(prefix) for n in names), names
    assert s.topics.dlq(s.topics.agent_answers).startswith(prefix)
    plain = demo_settings(Settings(), "127.0.0.1:4000", tmp_path, 5.0, True)
    assert plain.topics == Settings().topics and plain.groups == Settings().groups


def test_the_cli_offers_the_kinds_the_tool_knows() -> None:
    assert cli.demo.KINDS == KINDS


@pytest.mark.parametrize("argv", [["demo", "--topic-prefix", "x."], ["demo", "--keep-topics"],
                                  ["demo", "--broker", "apache", "--keep-topics"]])
def test_cluster_options_on_its_own_broker_are_a_usage_error(
        argv: list[str], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("JUDGEFLOW_KAFKA__")]:
        monkeypatch.delenv(name)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("judgeflow: --topic-prefix and --keep-topics apply to a configured "
                          "cluster") and "\n" not in err

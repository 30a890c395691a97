"""``bench detect``'s broker selection: Apache Kafka missing is a printed reason, not a crash,
and the embedded broker's fetch backoff never reaches another broker's settings."""

from __future__ import annotations

import pytest

from streams.settings import Settings
from tools.bench import brokers
from tools.kafka import KafkaUnavailable, cluster


def test_apache_kafka_unavailable_yields_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> str:
        raise KafkaUnavailable("no `java` on PATH")

    monkeypatch.setattr(cluster, "kafka_classpath", missing)
    with brokers.bench_broker("apache", Settings()) as b:
        assert b == "Apache Kafka skipped: no `java` on PATH"


def test_pointing_settings_at_a_broker_sets_only_its_backoff() -> None:
    s = Settings(kafka={"bootstrap_servers": "x:1", "idle_fetch_backoff_ms": 50})
    apache = brokers._point(s, "127.0.0.1:9")
    assert apache.kafka.bootstrap_servers == "127.0.0.1:9"
    assert apache.kafka.idle_fetch_backoff_ms == 0
    assert brokers._point(s, "y:2", backoff=50).kafka.idle_fetch_backoff_ms == 50


def test_cli_offers_the_broker_choice() -> None:
    from cli.main import build_parser

    args = build_parser().parse_args(["bench", "detect", "--broker", "apache"])
    assert args.broker == "apache"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["bench", "detect", "--broker", "kafka"])

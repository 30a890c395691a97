"""Apache Kafka in the tests: a cluster from tools/kafka, or a skip that says why."""

from __future__ import annotations

from typing import Any

import pytest

from tools.kafka import ApacheKafka, KafkaUnavailable, kafka_classpath


def apache_kafka_or_skip(**options: Any) -> ApacheKafka:
    """An (unstarted) :class:`ApacheKafka`; skips the test when Java/Maven are missing."""
    try:
        kafka_classpath()
    except KafkaUnavailable as exc:
        pytest.skip(f"Apache Kafka unavailable: {exc}")
    return ApacheKafka(**options)

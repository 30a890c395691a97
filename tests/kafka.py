"""The brokers of the tests: which kinds exist, and Apache Kafka from tools/kafka (or a skip
that says why).

:data:`CLIENT_SETTINGS` are the embedded broker's work-around settings every test client
gets, whatever the broker (:func:`tests.helpers.test_settings`): the client factory
(streams/kafka_clients.py) applies them only to a broker it recognises as the embedded one,
in the workers and in this process alike, so Apache Kafka gets none of them; the tests do not
choose per broker.
"""

from __future__ import annotations

from typing import Any

import pytest

from tools.broker import EmbeddedBroker
from tools.kafka import ApacheKafka, KafkaUnavailable, kafka_classpath

BROKER_KINDS = ("embedded", "apache")
TestBroker = EmbeddedBroker | ApacheKafka

#: noida-db ignores Fetch max-wait (a shorter pause than the default keeps the tests quick)
#: and never expires a SIGKILLed member; ignored by the factory on any other broker.
CLIENT_SETTINGS: dict[str, Any] = {"idle_fetch_backoff_ms": 20, "evict_dead_members": True}


def apache_kafka_or_skip(**options: Any) -> ApacheKafka:
    """An (unstarted) :class:`ApacheKafka`; skips the test when Java/Maven are missing."""
    try:
        kafka_classpath()
    except KafkaUnavailable as exc:
        pytest.skip(f"Apache Kafka unavailable: {exc}")
    return ApacheKafka(**options)

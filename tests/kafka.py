"""The brokers of the tests: which kinds exist, what each needs from the clients, and Apache
Kafka from tools/kafka (or a skip that says why).

:func:`client_quirks` gives the settings of the embedded broker's client-side work-arounds
for the tests (the idle fetch backoff and dead-member eviction; :func:`tests.helpers.
test_settings` reads them for the bootstrap it is given). The client factory
(streams/kafka_clients.py) applies them only to a broker it recognises as the embedded one,
in the workers and in this process alike; Apache Kafka gets none of them.
"""

from __future__ import annotations

from typing import Any

import pytest

from tools.broker import EmbeddedBroker
from tools.kafka import ApacheKafka, KafkaUnavailable, kafka_classpath

BROKER_KINDS = ("embedded", "apache")
TestBroker = EmbeddedBroker | ApacheKafka

_quirks_by_bootstrap: dict[str, dict[str, Any]] = {}


def client_quirks(kind: str) -> dict[str, Any]:
    """``kafka`` settings a broker kind needs from every client (workers, CLI, tests)."""
    if kind == "embedded":
        # noida-db ignores Fetch max-wait and never expires a SIGKILLed member.
        return {"idle_fetch_backoff_ms": 20, "evict_dead_members": True}
    return {"idle_fetch_backoff_ms": 0, "evict_dead_members": False}


def broker_kind(broker: TestBroker) -> str:
    return "embedded" if isinstance(broker, EmbeddedBroker) else "apache"


def use_broker(kind: str, bootstrap: str) -> None:
    """The test about to run talks to ``bootstrap``: its settings get that kind's quirks."""
    _quirks_by_bootstrap[bootstrap] = client_quirks(kind)


def quirks_for(bootstrap: str) -> dict[str, Any]:
    """The quirks of the broker at ``bootstrap``; one a test started itself is embedded."""
    return _quirks_by_bootstrap.get(bootstrap) or client_quirks("embedded")


def apache_kafka_or_skip(**options: Any) -> ApacheKafka:
    """An (unstarted) :class:`ApacheKafka`; skips the test when Java/Maven are missing."""
    try:
        kafka_classpath()
    except KafkaUnavailable as exc:
        pytest.skip(f"Apache Kafka unavailable: {exc}")
    return ApacheKafka(**options)

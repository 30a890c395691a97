"""The brokers of the tests: which kinds exist, what each needs from the clients, and Apache
Kafka from tools/kafka (or a skip that says why).

:func:`client_quirks` is the ONE place deciding the embedded broker's client-side
work-arounds for the tests (the idle fetch backoff and dead-member eviction); Apache Kafka
gets none of them. :func:`tests.helpers.test_settings` reads them for the bootstrap it is
given, and the test process's own consumers get the backoff through :func:`use_broker`.
"""

from __future__ import annotations

from typing import Any

import pytest

from streams.fetch_backoff import install_idle_fetch_backoff
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
    """The test about to run talks to ``bootstrap``: its settings and this process's
    consumers get that kind's quirks (and only those)."""
    quirks = client_quirks(kind)
    _quirks_by_bootstrap[bootstrap] = quirks
    install_idle_fetch_backoff(quirks["idle_fetch_backoff_ms"])


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

"""Shared fixtures. The brokers are real, on 127.0.0.1, started here and stopped by PID when
the session ends; nothing started by a test outlives the run.

``broker`` is parametrised over the two kinds every Kafka test runs against: ``embedded``
(noida-db, fast) and ``apache`` (Apache Kafka from tools/kafka, skipped with the reason when
Java or Maven are missing). Each is session-scoped, and pytest groups the tests by kind, so
each starts once. ``-k embedded`` / ``-k apache`` runs one kind.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.kafka import BROKER_KINDS, TestBroker, apache_kafka_or_skip
from tools.broker import EmbeddedBroker


@pytest.fixture(scope="session", params=BROKER_KINDS)
def broker(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestBroker]:
    if request.param == "embedded":
        with EmbeddedBroker(data_dir=tmp_path_factory.mktemp("broker")) as embedded:
            yield embedded
    else:
        with apache_kafka_or_skip(work_dir=tmp_path_factory.mktemp("kafka")) as apache:
            yield apache


@pytest.fixture()
def bootstrap(broker: TestBroker) -> str:
    return broker.bootstrap

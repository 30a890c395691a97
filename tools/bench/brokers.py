"""The brokers ``judgeflow bench detect`` measures on, one after the other in the same run:
the embedded broker (noida-db, with its client quirks) and Apache Kafka (a 1-node KRaft
broker from tools/kafka, full JIT, no quirks) — or the configured cluster (``--external``).

Each kind gets fresh settings: the same backlog and phases run on each, and the ratios are
reported per broker (a ratio only compares runs on the same broker).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from streams.settings import Settings

KINDS = ("embedded", "apache")
#: The embedded broker ignores Fetch max-wait: our own measuring consumers and the workers
#: pause after an empty fetch there (the client factory applies it to that broker only).
EMBEDDED_BACKOFF_MS = 50


@dataclass(frozen=True)
class BenchBroker:
    label: str
    settings: Settings


@contextlib.contextmanager
def bench_broker(kind: str, settings: Settings) -> Iterator[BenchBroker | str]:
    """A started broker of ``kind`` with settings pointing at it, or (when Apache Kafka
    cannot run here) the reason it is skipped. Stopped by PID on exit."""
    if kind == "external":
        yield BenchBroker(f"the configured cluster ({settings.kafka.bootstrap_servers})",
                          settings)
        return
    if kind == "embedded":
        from tools.broker import EmbeddedBroker

        with EmbeddedBroker() as embedded:
            yield BenchBroker("embedded broker (noida-db)", _point(
                settings, embedded.bootstrap, backoff=EMBEDDED_BACKOFF_MS))
        return
    from tools.kafka import KAFKA_VERSION, ApacheKafka, KafkaUnavailable

    try:
        apache = ApacheKafka(fast_start=False, heap="512m").start()
    except KafkaUnavailable as exc:
        yield f"Apache Kafka skipped: {exc}"
        return
    try:
        yield BenchBroker(f"Apache Kafka {KAFKA_VERSION} (1 KRaft node, started in "
                          f"{apache.startup_seconds:.1f}s)", _point(settings, apache.bootstrap))
    finally:
        apache.stop()


def _point(settings: Settings, bootstrap: str, backoff: int = 0) -> Settings:
    kafka = settings.kafka.model_copy(update={
        "bootstrap_servers": bootstrap, "idle_fetch_backoff_ms": backoff})
    return settings.model_copy(update={"kafka": kafka})

"""The ONE Kafka client factory: every consumer, producer, admin client and Faust app that
judgeflow makes comes from here, with the security settings applied and, only for a broker
recognised as the embedded one, its work-arounds.

* :func:`consumer`, :func:`producer`, :func:`admin` return aiokafka clients whose ``start()``
  first runs :func:`connect` (once per settings object and process): one raw connection
  with the same TLS/SASL settings that turns a wrong password, an untrusted certificate or
  an unreachable broker into one :class:`~streams.kafka_access.KafkaAccessError` line,
  and tells the embedded broker from any other.
* :func:`faust_app` builds a Faust app with the same broker address and credentials.
* :func:`join_group` is what a worker awaits before it joins a consumer group.
* :func:`client_id` is every worker's Kafka client id (``<host>:<pid>`` in it).

The embedded broker (noida-db) is recognised by the cluster id it answers with (data:
:data:`EMBEDDED_CLUSTER_IDS`; ``kafka.broker`` can say so instead). Only then are its two
work-arounds applied: the idle fetch backoff (:mod:`streams.fetch_backoff`, it ignores Fetch
max-wait) and dead-member eviction (:mod:`streams.member_eviction`, it never expires a
SIGKILLed member). They are never applied to another broker, whatever the settings say.
Three client fixes apply everywhere: an admin request any broker may answer goes to one
that answers (:mod:`streams.any_broker`), not to a crashed one still in the metadata; an
empty assignment from the group leader is a rejoin (:mod:`streams.group_join`), not a dead
consumer; a rejected OAUTHBEARER token is a failed
login (:mod:`streams.oauthbearer`), not a connection Kafka serves as unauthenticated.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from dataclasses import dataclass
from typing import Any

import faust
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient

from streams.any_broker import install_faust_topic_creation, send_to_any
from streams.fetch_backoff import install_idle_fetch_backoff
from streams.group_join import install_empty_assignment_rejoin
from streams.kafka_access import ClusterInfo, KafkaAccessError, probe
from streams.kafka_security import aiokafka_auth, faust_credentials
from streams.kafka_settings import KafkaSettings
from streams.member_eviction import evict_dead_members
from streams.oauthbearer import install_oauth_error_challenge

log = logging.getLogger(__name__)

#: Cluster ids the embedded broker answers with (noida-db has one fixed id).
EMBEDDED_CLUSTER_IDS: dict[str, str] = {"MkU3OEVBNTctOEUyRi00": "noida-db 0.2.3"}

__all__ = ["Broker", "KafkaAccessError", "KafkaTarget", "admin", "client_id", "connect",
           "consumer",
           "faust_app", "faust_options", "join_group", "kafka_settings", "producer"]

#: What every factory function takes: the Kafka settings, or a bare bootstrap address for a
#: PLAINTEXT cluster (dev tools and tests).
KafkaTarget = KafkaSettings | str
_plain: dict[str, KafkaSettings] = {}


def kafka_settings(target: KafkaTarget) -> KafkaSettings:
    """``target`` as settings (one settings object per bare address, so it connects once)."""
    if isinstance(target, KafkaSettings):
        return target
    if target not in _plain:
        _plain[target] = KafkaSettings(bootstrap_servers=target)
    return _plain[target]


def client_id(worker: str) -> str:
    """The Kafka client id of this process: ``judgeflow-<worker>@<host>:<pid>`` (dead-member
    eviction, :mod:`streams.member_eviction`, reads the host and pid back)."""
    return f"judgeflow-{worker}@{socket.gethostname()}:{os.getpid()}"


@dataclass(frozen=True)
class Broker:
    """What :func:`connect` learnt about the cluster."""

    info: ClusterInfo
    #: the embedded broker's name ("noida-db 0.2.3"), or None for any other Kafka
    embedded: str | None

    @property
    def name(self) -> str:
        return self.embedded or "Kafka"


#: id(settings) -> (settings kept alive so the id stays theirs, what connect() found)
_connected: dict[int, tuple[KafkaSettings, Broker]] = {}


def embedded_name(k: KafkaSettings, info: ClusterInfo) -> str | None:
    """The embedded broker's name when the work-arounds apply to this cluster, else None."""
    known = EMBEDDED_CLUSTER_IDS.get(info.cluster_id or "")
    if k.broker == "kafka":
        return None
    if k.broker == "embedded":
        if known is None:
            log.warning("JUDGEFLOW_KAFKA__BROKER=embedded, but the cluster at %s (id %s) is "
                        "not a known embedded broker; its work-arounds are applied as asked: "
                        "never do this on a shared cluster", info.bootstrap, info.cluster_id)
        return known or "embedded broker"
    return known


async def connect(target: KafkaTarget) -> Broker:
    """Check that Kafka accepts these settings and learn which broker it is (cached)."""
    k = kafka_settings(target)
    found = _connected.get(id(k))
    if found is not None and found[0] is k:
        return found[1]
    if k.sasl_mechanism == "OAUTHBEARER":
        install_oauth_error_challenge()  # a rejected token fails the login (RFC 7628)
    info = await probe(k)
    broker = Broker(info, embedded_name(k, info))
    install_empty_assignment_rejoin()  # the protocol's meaning, on every broker
    if broker.embedded is not None:
        backoff = install_idle_fetch_backoff(k.bootstrap_servers, k.idle_fetch_backoff_ms)
        log.info("%s at %s: embedded-broker work-arounds on (idle fetch backoff %s, "
                 "dead-member eviction %s)", broker.embedded, info.bootstrap,
                 f"{k.idle_fetch_backoff_ms} ms" if backoff else "off",
                 "on" if k.evict_dead_members else "off")
    _connected[id(k)] = (k, broker)
    return broker


class _Checked:
    """Mixed into each client class: :func:`connect` runs before the client starts."""

    _judgeflow_kafka: KafkaSettings

    async def start(self) -> None:
        await _checked(self, self._judgeflow_kafka)
        await super().start()  # type: ignore[misc]


class _Consumer(_Checked, AIOKafkaConsumer):  # type: ignore[misc]
    def __init__(self, k: KafkaSettings, *topics: str, **options: Any) -> None:
        self._judgeflow_kafka = k
        super().__init__(*topics, bootstrap_servers=k.bootstrap_servers, **aiokafka_auth(k),
                         **options)


class _Producer(_Checked, AIOKafkaProducer):  # type: ignore[misc]
    def __init__(self, k: KafkaSettings, **options: Any) -> None:
        self._judgeflow_kafka = k
        super().__init__(bootstrap_servers=k.bootstrap_servers, **aiokafka_auth(k), **options)


class _Admin(_Checked, AIOKafkaAdminClient):  # type: ignore[misc]
    """Requests any broker may answer go to one that answers (:mod:`streams.any_broker`):
    a crashed broker still in the metadata must not fail the request."""

    def __init__(self, k: KafkaSettings, **options: Any) -> None:
        self._judgeflow_kafka = k
        super().__init__(bootstrap_servers=k.bootstrap_servers, **aiokafka_auth(k), **options)

    async def _send_request(self, request: Any, node_id: int | None = None) -> Any:
        if node_id is not None:  # a coordinator's or a broker's own request: that node only
            return await super()._send_request(request, node_id)
        return await send_to_any(self._client, request, self._request_timeout_ms / 1000)

    async def _send_to_controller(self, request: Any) -> Any:
        controller = self._client.cluster.controller
        return await send_to_any(self._client, request, self._request_timeout_ms / 1000,
                                 prefer=None if controller is None else controller.nodeId)


async def _checked(client: Any, k: KafkaSettings) -> None:
    """:func:`connect` before a client starts; a refused client is closed, not leaked."""
    try:
        await connect(k)
    except BaseException:
        closer = getattr(client, "stop", None) or client.close
        with contextlib.suppress(Exception):
            await closer()
        raise


def consumer(target: KafkaTarget, *topics: str, **options: Any) -> AIOKafkaConsumer:
    """An aiokafka consumer (not started) with the security settings applied."""
    return _Consumer(kafka_settings(target), *topics, **options)


def producer(target: KafkaTarget, **options: Any) -> AIOKafkaProducer:
    """An aiokafka producer (not started) with the security settings applied."""
    return _Producer(kafka_settings(target), **options)


def admin(target: KafkaTarget, **options: Any) -> AIOKafkaAdminClient:
    """An aiokafka admin client (not started) with the security settings applied."""
    return _Admin(kafka_settings(target), **options)


def faust_broker_url(bootstrap_servers: str) -> str:
    hosts = [h.strip() for h in bootstrap_servers.split(",") if h.strip()]
    return ";".join(f"kafka://{h}" for h in hosts)


def faust_options(k: KafkaSettings) -> dict[str, Any]:
    """``faust.App`` keyword arguments: the broker URL and ``broker_credentials``."""
    options: dict[str, Any] = {"broker": faust_broker_url(k.bootstrap_servers)}
    credentials = faust_credentials(k)
    if credentials is not None:
        options["broker_credentials"] = credentials
    return options


def faust_app(k: KafkaSettings, app_id: str, **options: Any) -> faust.App:
    """A Faust app on this cluster (``options``: the app's own settings). Await
    :func:`connect` before starting it: Faust's own clients do not check first."""
    install_faust_topic_creation()  # its topics created through a broker that answers
    return faust.App(app_id, **faust_options(k), **options)


async def join_group(target: KafkaTarget, group: str) -> None:
    """Before joining ``group``: on the embedded broker only, evict the group's members whose
    process on this host is dead (it never expires them itself)."""
    k = kafka_settings(target)
    broker = await connect(k)
    if broker.embedded is not None and k.evict_dead_members:
        await evict_dead_members(admin(k), group)

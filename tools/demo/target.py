"""Where ``judgeflow demo`` runs: a broker of its own, or a cluster the user points it at.

* ``embedded`` (the default): noida-db on a free loopback port, thrown away afterwards.
* ``apache``: the repo's Apache Kafka launcher (:class:`tools.kafka.ApacheKafka`, dev
  tooling: needs Java 17+ and Maven), one KRaft node on loopback, thrown away afterwards.
* ``cluster``: the configured cluster (``--bootstrap-servers``, ``JUDGEFLOW_KAFKA__*``
  with its TLS/SASL settings), chosen by default when any connection setting was given.
  The demo does not own it: every topic and consumer group it uses is named under a fresh
  prefix (``judgeflow-demo-<run id>.``), it refuses a prefix that already names a topic
  (it never writes to, rewrites or deletes a topic that was there before it), and at the end
  it deletes the topics and groups it created (``--keep-topics`` keeps them) and says so.
"""

from __future__ import annotations

import contextlib
import re
import secrets
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar, get_args

from aiokafka import errors as kafka_errors
from aiokafka.protocol.admin import DeleteGroupsRequest

from streams import kafka_clients
from streams.exit_codes import CommandError
from streams.kafka_settings import KafkaSettings
from streams.settings import Settings
from streams.topics import all_topics

Kind = Literal["embedded", "apache", "cluster"]
KINDS: tuple[Kind, ...] = get_args(Kind)
S = TypeVar("S", bound=Settings)

#: The settings that say *which* cluster and how to log in to it: any of them given
#: explicitly (environment or ``--bootstrap-servers``) points the demo at that cluster.
CONNECTION_FIELDS = ("bootstrap_servers", "security_protocol", "sasl_mechanism",
                     "sasl_username", "sasl_password", "sasl_username_file",
                     "sasl_password_file", "sasl_oauth_token_file", "sasl_oauth_token_provider",
                     "ssl_cafile", "ssl_certfile", "ssl_keyfile", "ssl_key_password",
                     "ssl_key_password_file", "ssl_check_hostname", "broker")
PREFIX_OK = re.compile(r"[A-Za-z0-9._-]{1,120}")


def pointed(k: KafkaSettings) -> list[str]:
    """The connection settings the user gave explicitly (their environment names)."""
    return [f"JUDGEFLOW_KAFKA__{f.upper()}" for f in CONNECTION_FIELDS
            if f in k.model_fields_set]


def choose(requested: Kind | None, k: KafkaSettings) -> Kind:
    """``--broker`` as given, else the configured cluster when one was pointed at."""
    if requested is not None:
        return requested
    return "cluster" if pointed(k) else "embedded"


def own_broker_kafka(k: KafkaSettings, bootstrap: str) -> KafkaSettings:
    """The user's Kafka settings with the connection ones replaced by a broker the demo
    started (PLAINTEXT on loopback; the client factory recognises which broker it is)."""
    reset = {f: KafkaSettings.model_fields[f].default for f in CONNECTION_FIELDS}
    return k.model_copy(update={**reset, "bootstrap_servers": bootstrap})


def run_prefix() -> str:
    return f"judgeflow-demo-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}."


def prefixed(s: S, prefix: str) -> S:
    """Every topic and consumer group of ``s`` under ``prefix`` (the detect worker's Faust
    app id is its group, so its internal topics fall under the prefix too)."""
    topics = s.topics.model_copy(update={n: prefix + getattr(s.topics, n)
                                         for n in type(s.topics).model_fields})
    groups = s.groups.model_copy(update={n: prefix + getattr(s.groups, n)
                                         for n in type(s.groups).model_fields})
    return s.model_copy(update={"topics": topics, "groups": groups})


@dataclass
class Target:
    kind: Kind
    kafka: KafkaSettings
    #: topic and group prefix on a cluster the demo does not own ("" on its own broker)
    prefix: str = ""
    #: what the first line says about it
    describe: str = ""
    #: topics that existed on the cluster before the demo (never touched)
    before: set[str] = field(default_factory=set)
    #: a failed run keeps its broker's data next to the worker logs
    failed: bool = False

    @property
    def owned(self) -> bool:
        return self.kind != "cluster"


@contextlib.contextmanager
def open_target(kind: Kind, settings: Settings, work: Path, prefix: str | None,
                note: Any) -> Iterator[Target]:
    """The cluster the demo runs on, for the ``with`` block; a broker it started is stopped
    (and its data removed after a run that did not raise) when the block ends."""
    k = settings.kafka
    if kind == "embedded":
        from tools.broker import EmbeddedBroker

        note("starting the embedded broker")
        with EmbeddedBroker(data_dir=work / "broker") as broker:
            target = Target(kind, own_broker_kafka(k, broker.bootstrap),
                            describe=f"embedded broker {broker.bootstrap}")
            yield target
        if not target.failed:
            shutil.rmtree(work / "broker", ignore_errors=True)  # ~4x the records' size
        return
    if kind == "apache":
        from tools.kafka import KAFKA_VERSION, ApacheKafka, kafka_classpath

        note(f"starting Apache Kafka {KAFKA_VERSION} (1 KRaft node; the first run asks "
             "Maven for its jars)")
        kafka_classpath()  # KafkaUnavailable (no Java/Maven) is one line, before anything
        with ApacheKafka(brokers=1, work_dir=work / "kafka") as cluster:
            target = Target(kind, own_broker_kafka(k, cluster.bootstrap),
                            describe=f"Apache Kafka {KAFKA_VERSION} {cluster.bootstrap} "
                            f"(up in {cluster.startup_seconds:.1f}s)")
            yield target
        if not target.failed:
            shutil.rmtree(work / "kafka", ignore_errors=True)
        return
    chosen = prefix if prefix is not None else run_prefix()
    if not PREFIX_OK.fullmatch(chosen):
        raise CommandError("--topic-prefix must be 1-120 of A-Z a-z 0-9 . _ - (a topic "
                           f"name's characters), not {chosen!r}")
    yield Target(kind, k, prefix=chosen,
                 describe=f"the configured cluster {k.bootstrap_servers} "
                 f"({k.security_protocol}); topics and groups under {chosen}")


async def claim(target: Target, s: Settings) -> None:
    """On a user's cluster: connect (a wrong password or an unreachable cluster is one line)
    and refuse a prefix that already names a topic, so nothing there is written to."""
    await kafka_clients.connect(s.kafka)
    if target.owned:
        return
    admin = kafka_clients.admin(s.kafka)
    await admin.start()
    try:
        target.before = set(await admin.list_topics())
    finally:
        await admin.close()
    taken = sorted(t for t in target.before if t.startswith(target.prefix)
                   or t in all_topics(s))
    if taken:
        raise CommandError(f"topic {taken[0]} already exists on {s.kafka.bootstrap_servers}"
                           f"{f' (and {len(taken) - 1} more)' if len(taken) > 1 else ''}: "
                           "the demo only writes to topics it creates; choose another "
                           "--topic-prefix")


async def tidy(target: Target, s: Settings) -> str:
    """Delete the topics (those under the prefix that were not there before) and consumer
    groups this run created on a user's cluster; what was done, in one line."""
    admin = kafka_clients.admin(s.kafka)
    await admin.start()
    try:
        mine = sorted(t for t in await admin.list_topics()
                      if t.startswith(target.prefix) and t not in target.before)
        failed = []
        if mine:
            response = await admin.delete_topics(mine)
            failed = [t for t, code, *_ in response.topic_error_codes if code != 0]
        ours = {getattr(s.groups, n) for n in type(s.groups).model_fields}
        # only those the cluster shows us: a group never joined (or not ours to see) is not
        # there to delete
        groups = sorted(ours & {g for g, *_ in await admin.list_consumer_groups()})
        groups_left = await _delete_groups(admin, groups)
    finally:
        await admin.close()
    if not mine and not groups:
        return f"the run created no topic or group under {target.prefix}"
    done = (f"deleted the {len(mine) - len(failed)} topic(s) and {len(groups) - len(groups_left)}"
            f" consumer group(s) it created under {target.prefix}")
    if failed or groups_left:
        left = [*failed, *(f"group {g}" for g in groups_left)]
        return (f"{done}; could NOT delete {', '.join(left)} (this principal may lack Delete "
                "on them): delete them by hand")
    return done


async def _delete_groups(admin: Any, groups: list[str]) -> list[str]:
    """Delete the (now empty) groups; those that could not be deleted (none joined is fine)."""
    left = []
    for group in groups:
        try:
            node = await admin.find_coordinator(group)
            response = await admin._send_request(DeleteGroupsRequest([group]), node)
            code = response.results[0][1]
        except kafka_errors.KafkaError:
            code = -1
        if code not in (0, kafka_errors.GroupIdNotFound.errno):
            left.append(group)
    return left

"""An Apache Kafka KRaft cluster on loopback for tests and benchmarks (sibling of
:class:`tools.broker.EmbeddedBroker`, same contract: started by PID, stopped by PID, free
127.0.0.1 ports, a fresh directory, nothing left running).

::

    with ApacheKafka(brokers=3, secure=True, users={"alice": "alice-pw"}) as k:
        k.bootstrap                      # PLAINTEXT, e.g. "127.0.0.1:4101,127.0.0.1:4107,..."
        k.bootstrap_for("SASL_SSL")      # SCRAM-SHA-256/512 or PLAIN over TLS
        k.bootstrap_for("SSL")           # mutual TLS (client certificate required)
        k.bootstrap_for("OAUTH")         # oauth=True: SASL_SSL, OAUTHBEARER (unsecured JWTs)
        k.oauth_token("alice")           # an unsigned JWT the OAUTH listener takes: User:alice
        k.ca_file                        # the test CA clients trust (hostname = 127.0.0.1)
        k.client_cert("alice")           # CertPair(cert, key, keystore): CN=alice -> User:alice
        k.admin_user, k.admin_password   # the super user (SCRAM and PLAIN; cert "admin" too)
        k.add_scram_user("bob", "bob-pw")
        k.add_acl("User:alice", ["Read", "Describe"], topic="t", group="g")
        k.remove_acl("User:alice", ["Read"], topic="t")
        k.leader("t", 0)                 # index of the node leading t-0
        k.kill(i); k.start(i)            # SIGKILL node i / start it again (same data)
        k.stop(i); k.restart(i)          # graceful (SIGTERM) stop / stop + start
        k.wait_in_sync()                 # every partition's ISR full again
        k.cut(); k.restore()             # proxied=True: cut/restore k.proxied_bootstrap
        k.startup_seconds                # format + JVM start until every node answered

Options: ``brokers`` (1 or 3; each node a combined broker + controller), ``message_max_bytes``
(and the replica-fetch limits that go with it), ``secure`` (SASL_SSL + SSL listeners, a test
CA made with openssl, StandardAuthorizer with ``admin`` and ANONYMOUS as super users),
``users`` (SCRAM + PLAIN users created at format time), ``oauth`` (with ``secure``: an
OAUTH listener whose OAUTHBEARER tokens Kafka's unsecured validator checks), ``proxied`` (a
PROXIED listener reached through per-node :class:`tools.kafka.proxy.TcpProxy`),
``properties`` (extra broker
settings). Internal topics' replication factor is the cluster size, min ISR min(2, size),
``group.initial.rebalance.delay.ms`` 0. Raises :class:`KafkaUnavailable` when Java, Maven or
openssl are missing (tests skip on it) and :class:`BrokerError` when a node does not come up.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.broker import BrokerError, die_with_parent, free_port
from tools.kafka import acl, probe
from tools.kafka.certs import CertPair, TestCA
from tools.kafka.classpath import kafka_classpath
from tools.kafka.config import (
    SCRAM_MECHANISMS,
    NodePorts,
    Security,
    render,
    server_properties,
    unsecured_jwt,
)
from tools.kafka.java import java_command, run_tool
from tools.kafka.proxy import TcpProxy

log = logging.getLogger(__name__)


@dataclass
class ApacheKafka:
    brokers: int = 1
    secure: bool = False
    message_max_bytes: int | None = None
    users: Mapping[str, str] = field(default_factory=dict)
    proxied: bool = False
    oauth: bool = False
    properties: Mapping[str, str] = field(default_factory=dict)
    heap: str = "384m"
    fast_start: bool = True
    work_dir: Path | None = None
    startup_timeout: float = 120.0
    admin_user: str = "admin"
    admin_password: str = "admin-secret"
    startup_seconds: float = field(default=0.0, init=False)
    _ports: dict[int, NodePorts] = field(default_factory=dict, init=False)
    _procs: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict, init=False)
    _proxies: dict[int, TcpProxy] = field(default_factory=dict, init=False)
    _ca: TestCA | None = field(default=None, init=False)
    _tmp: str | None = field(default=None, init=False)
    _down: set[int] = field(default_factory=set, init=False)

    # -- addresses ---------------------------------------------------------------------
    @property
    def bootstrap(self) -> str:
        return self.bootstrap_for("PLAINTEXT")

    @property
    def proxied_bootstrap(self) -> str:
        return self.bootstrap_for("PROXIED")

    def bootstrap_for(self, listener: str) -> str:
        """``host:port,...`` of every node's ``listener`` (PLAINTEXT, SASL_SSL, SSL, PROXIED)."""
        attr = {"PLAINTEXT": "plaintext", "SASL_SSL": "sasl_ssl", "SSL": "ssl",
                "PROXIED": "proxy", "OAUTH": "oauth"}[listener]
        ports = [getattr(p, attr) for _, p in sorted(self._ports.items())]
        if not ports or not all(ports):
            raise BrokerError(f"this cluster has no {listener} listener (secure={self.secure}, "
                              f"proxied={self.proxied})")
        return ",".join(f"127.0.0.1:{p}" for p in ports)

    @property
    def ca_file(self) -> Path:
        return self._need_ca().ca_file

    def client_cert(self, name: str) -> CertPair:
        """A client certificate with CN=``name`` (principal ``User:name`` on the SSL listener)."""
        return self._need_ca().issue(name)

    def oauth_token(self, sub: str, lifetime: int = 3600) -> str:
        """A token the OAUTH listener accepts as ``User:sub`` for ``lifetime`` seconds."""
        return unsecured_jwt(sub, issued_at=int(time.time()), lifetime=lifetime)

    def _need_ca(self) -> TestCA:
        if self._ca is None:
            raise BrokerError("certificates exist only on a secure cluster (secure=True)")
        return self._ca

    @property
    def node_ids(self) -> list[int]:
        return sorted(self._ports)

    # -- lifecycle ---------------------------------------------------------------------
    def start(self, index: int | None = None) -> ApacheKafka:
        """Start the cluster, or (``index``) start node ``index`` again after kill/stop."""
        if index is not None:
            self._launch(self._node(index))
            self.wait_ready()
            return self
        if self._procs:
            return self
        if self.brokers < 1:
            raise ValueError("brokers must be >= 1")
        began = time.monotonic()
        kafka_classpath()  # KafkaUnavailable before any directory or port is taken
        if self.work_dir is None:
            self._tmp = tempfile.mkdtemp(prefix="judgeflow-kafka-")
            self.work_dir = Path(self._tmp)
        self.work_dir.mkdir(parents=True, exist_ok=True)
        try:
            self._configure()
            self._format()
            for node in self.node_ids:
                self._launch(node)
            self.wait_ready(self.startup_timeout)
        except BaseException:
            self.stop()
            raise
        self.startup_seconds = time.monotonic() - began
        log.info("Apache Kafka (%d node(s)) answering on %s after %.1fs", self.brokers,
                 self.bootstrap, self.startup_seconds)
        return self

    def _configure(self) -> None:
        assert self.work_dir is not None
        security = None
        if self.secure:
            self._ca = TestCA(self.work_dir / "ca")
            keystore = self._ca.issue("broker", server=True).keystore
            self._ca.issue(self.admin_user)
            security = Security(self._ca.ca_file, keystore, self.admin_user, self._all_users(),
                                oauth=self.oauth)
        taken: set[int] = set()

        def port(wanted: bool = True) -> int:
            # distinct: the kernel may hand a just-closed port out again, and Kafka refuses
            # two listeners on one port (a rare failed format in CI)
            while wanted:
                p = free_port()
                if p not in taken:
                    taken.add(p)
                    return p
            return 0

        for node in range(1, self.brokers + 1):
            self._ports[node] = NodePorts(
                plaintext=port(), internal=port(), controller=port(), sasl_ssl=port(self.secure),
                ssl=port(self.secure), proxied=port(self.proxied), proxy=port(self.proxied),
                oauth=port(self.secure and self.oauth))
        for node, ports in self._ports.items():
            props = server_properties(node, self._ports, self.work_dir / f"data-{node}",
                                      message_max_bytes=self.message_max_bytes,
                                      security=security, extra=self.properties)
            self._config_path(node).write_text(render(props))
            if self.proxied:
                proxy = TcpProxy(ports.proxy, ports.proxied)
                proxy.restore()
                self._proxies[node] = proxy

    def _all_users(self) -> dict[str, str]:
        return {self.admin_user: self.admin_password, **self.users}

    def _format(self) -> None:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        scram: list[str] = []
        if self.secure:
            for name, pw in self._all_users().items():
                for mech in SCRAM_MECHANISMS:
                    scram += ["--add-scram", f"{mech}=[name={name},password={pw}]"]
        procs = []
        for node in self.node_ids:  # one JVM each, in parallel
            cmd = java_command("kafka.tools.StorageTool",
                               ["format", "--config", str(self._config_path(node)),
                                f"--cluster-id={cluster_id}", *scram], heap="256m")
            procs.append((node, subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                                 stderr=subprocess.STDOUT,
                                                 stdin=subprocess.DEVNULL)))
        for node, proc in procs:
            out, _ = proc.communicate(timeout=120)
            if proc.returncode != 0:
                text = out.decode(errors="replace")  # the cause leads, the stack follows
                raise BrokerError(f"formatting Kafka node {node} failed: {text[:800]}"
                                  + (f" ... {text[-400:]}" if len(text) > 800 else ""))

    def _launch(self, node: int) -> None:
        proc = self._procs.get(node)
        if proc is not None and proc.poll() is None:
            return
        cmd = java_command("kafka.Kafka", [str(self._config_path(node))], heap=self.heap,
                           fast_start=self.fast_start)
        out = open(self.log_path(node), "ab")  # noqa: SIM115
        self._procs[node] = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL, start_new_session=True,
                                             preexec_fn=die_with_parent)
        out.close()
        self._down.discard(node)

    def wait_ready(self, timeout: float | None = None) -> None:
        """Until every running node is registered with the quorum and answers clients."""
        deadline = time.monotonic() + (timeout or self.startup_timeout)
        want = len(self._running())
        while time.monotonic() < deadline:
            for node, proc in self._procs.items():
                if proc.poll() is not None and node not in self._down:
                    raise BrokerError(f"Kafka node {node} exited at start-up:\n"
                                      f"{self.log_tail(node)}")
            if probe.live_brokers(self.bootstrap) >= want:
                return
            time.sleep(0.2)
        raise BrokerError(f"Kafka did not answer with {want} broker(s) on {self.bootstrap} "
                          f"within {timeout or self.startup_timeout:.0f}s:\n"
                          f"{self.log_tail(self.node_ids[0])}")

    def _running(self) -> list[int]:
        return [n for n, p in self._procs.items() if p.poll() is None]

    def kill(self, index: int) -> None:
        """SIGKILL node ``index`` (0-based): no controlled shutdown, as a crash."""
        self._signal(self._node(index), signal.SIGKILL, wait=10)

    def stop(self, index: int | None = None) -> None:
        """Stop node ``index`` gracefully (SIGTERM: controlled shutdown, leadership moves), or
        the whole cluster (SIGKILL: its data is thrown away) and its directory."""
        if index is not None:
            self._signal(self._node(index), signal.SIGTERM, wait=60)
            return
        for node in list(self._procs):
            self._signal(node, signal.SIGKILL, wait=10)
        self._procs.clear()
        for proxy in self._proxies.values():
            proxy.close()
        self._proxies.clear()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
            self.work_dir = None

    def restart(self, index: int) -> None:
        self.stop(index)
        self.start(index)

    def _signal(self, node: int, sig: int, wait: float) -> None:
        proc = self._procs.get(node)
        self._down.add(node)
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            log.warning("Kafka node %d did not stop in %.0fs; SIGKILL", node, wait)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)

    def _node(self, index: int) -> int:
        if not 0 <= index < self.brokers:
            raise IndexError(f"node index {index} out of range (cluster of {self.brokers})")
        return index + 1

    # -- inspection --------------------------------------------------------------------
    def pids(self) -> list[int]:
        return [p.pid for p in self._procs.values() if p.poll() is None]

    def leader(self, topic: str, partition: int) -> int:
        """The 0-based index of the node leading ``topic``-``partition``."""
        return probe.leader(self.bootstrap, topic, partition) - 1

    def wait_in_sync(self, timeout: float = 120.0) -> None:
        """Until no partition of any topic is under-replicated (a rolling restart waits for
        this before the next node)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if probe.under_replicated(self.bootstrap) == 0:
                return
            time.sleep(0.5)
        raise BrokerError(f"partitions still under-replicated after {timeout:.0f}s")

    def cut(self, index: int | None = None) -> None:
        """Cut the PROXIED listener's clients off node ``index`` (or every node)."""
        for node in self._proxy_nodes(index):
            self._proxies[node].cut()

    def restore(self, index: int | None = None) -> None:
        for node in self._proxy_nodes(index):
            self._proxies[node].restore()

    def _proxy_nodes(self, index: int | None) -> list[int]:
        if not self._proxies:
            raise BrokerError("cut/restore need a proxied cluster (proxied=True)")
        return self.node_ids if index is None else [self._node(index)]

    # -- users and ACLs (through the PLAINTEXT listener, whose principal is a super user) --
    def add_scram_user(self, name: str, password: str) -> None:
        """Create or update a SCRAM-SHA-256 and -512 user on the running cluster."""
        for mech in SCRAM_MECHANISMS:  # one request may alter a user only once
            run_tool("org.apache.kafka.tools.ConfigCommand",
                     ["--bootstrap-server", self.bootstrap, "--alter", "--add-config",
                      f"{mech}=[password={password}]", "--entity-type", "users",
                      "--entity-name", name])

    def add_acl(self, principal: str, operations: Sequence[str], **resource: Any) -> None:
        """Allow (``deny=True``: deny) ``principal`` (e.g. ``User:alice``) the ``operations``
        (Read, Write, Create, Describe, DescribeConfigs, Alter, IdempotentWrite, All, ...) on
        ``topic=``, ``group=``, ``transactional_id=`` and/or ``cluster=True``;
        ``prefixed=True`` makes the names prefixes. Takes effect on every node."""
        run_tool("org.apache.kafka.tools.AclCommand",
                 ["--bootstrap-server", self.bootstrap, "--add",
                  *acl.arguments(principal, operations, **resource)])

    def remove_acl(self, principal: str, operations: Sequence[str],
                   **resource: Any) -> None:
        """Remove what :meth:`add_acl` with the same arguments added."""
        run_tool("org.apache.kafka.tools.AclCommand",
                 ["--bootstrap-server", self.bootstrap, "--remove", "--force",
                  *acl.arguments(principal, operations, **resource)])

    def list_acls(self) -> str:
        return run_tool("org.apache.kafka.tools.AclCommand",
                        ["--bootstrap-server", self.bootstrap, "--list"])

    # -- files ---------------------------------------------------------------------------
    def _config_path(self, node: int) -> Path:
        assert self.work_dir is not None
        return self.work_dir / f"server-{node}.properties"

    def log_path(self, node: int) -> Path:
        assert self.work_dir is not None
        return self.work_dir / f"broker-{node}.log"

    def log_tail(self, node: int) -> str:
        path = self.log_path(node)
        return path.read_text(errors="replace")[-2000:] if path.exists() else "(no log)"

    def __enter__(self) -> ApacheKafka:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

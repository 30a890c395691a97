"""The embedded Kafka-protocol broker (noida-db) for the demo, ``judgeflow broker`` and tests.

Runs the packaged binary itself (not the console script, whose PID does not own the broker),
on a free 127.0.0.1 port with a fresh data directory; ready means it answered a Kafka
ApiVersions + Metadata request, not merely that the port opened. Stopped by PID (SIGTERM,
then SIGKILL). Production uses Apache Kafka; nothing here is used against a real cluster.

noida-db is a DEV broker, not a durable one: it keeps all data in one JSON file
(``kafka.json`` in the data directory) rewritten every ~2 s, so a SIGKILL loses the writes it
acknowledged since the last rewrite (records, offset commits and group state alike). The
workers ride out its restart and lose nothing on top of that (see
tests/integration/test_broker_restart.py); they cannot recover what the broker itself
dropped after acknowledging it. It also ignores Fetch max-wait (:mod:`streams.fetch_backoff`) and
never expires a SIGKILLed group member (:mod:`streams.member_eviction`); the client factory
(:mod:`streams.kafka_clients`) recognises it and applies both work-arounds to its clients only.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from streams.errors import StreamsError

log = logging.getLogger(__name__)


class BrokerError(StreamsError):
    """A dev broker (embedded or tools.kafka's Apache Kafka) could not be started, reached or
    stopped. A StreamsError, so that the CLI's one error map says it in one line."""


def noida_binary() -> Path:
    try:
        path = Path(str(resources.files("noida_db") / "noida-db"))
    except ModuleNotFoundError:
        raise BrokerError("the embedded broker is not installed (it comes with the dev extra: "
                          "pip install -e '.[test,dev]')") from None
    if not path.is_file():
        raise BrokerError(f"noida-db binary not found at {path}; is the noida-db wheel installed?")
    return path


def die_with_parent() -> None:
    """``preexec_fn``: the child gets SIGTERM if our process dies (even by SIGKILL), so an
    embedded broker or worker never outlives whoever started it (Linux; no-op elsewhere)."""
    try:
        libc = ctypes.CDLL(None)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _kafka_answers(bootstrap: str, timeout: float) -> bool:
    from streams import kafka_clients

    admin = kafka_clients.admin(bootstrap, request_timeout_ms=int(timeout * 1000))
    quiet = logging.getLogger("aiokafka")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)  # "connection refused" is expected while it starts
    try:
        await asyncio.wait_for(admin.start(), timeout)
        await asyncio.wait_for(admin.list_topics(), timeout)
        return True
    except Exception:
        return False
    finally:
        with contextlib.suppress(Exception):
            await admin.close()
        quiet.setLevel(level)


def kafka_answers(bootstrap: str, timeout: float = 2.0) -> bool:
    """True when a Kafka client completes a metadata round trip with ``bootstrap``."""
    return asyncio.run(_kafka_answers(bootstrap, timeout))


@dataclass
class EmbeddedBroker:
    """``with EmbeddedBroker() as b: b.bootstrap`` — a broker that lives as long as the block."""

    port: int = 0
    data_dir: Path | None = None
    startup_timeout: float = 30.0
    log_path: Path | None = None
    process: subprocess.Popen[bytes] | None = field(default=None, init=False)
    _tmp: str | None = field(default=None, init=False)

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> EmbeddedBroker:
        if self.process is not None:
            return self
        if self.data_dir is None:
            self._tmp = tempfile.mkdtemp(prefix="judgeflow-broker-")
            self.data_dir = Path(self._tmp)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.port = self.port or free_port()
        out = open(self.log_path or self.data_dir / "broker.log", "ab")  # noqa: SIM115
        cmd = [str(noida_binary()), "start", "--host", "127.0.0.1", "--only", "kafka",
               "--kafka-port", str(self.port), "--data-dir", str(self.data_dir)]
        log.debug("starting embedded broker: %s", " ".join(cmd))
        # Own process group: a Ctrl-C on the CLI reaches us, and we stop the broker ourselves.
        self.process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True,
                                        preexec_fn=die_with_parent)
        out.close()
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = self._log_tail()
                self.process = None
                raise BrokerError(f"embedded broker exited at start-up:\n{tail}")
            if kafka_answers(self.bootstrap, timeout=1.0):
                log.info("embedded broker answering on %s", self.bootstrap)
                return self
            time.sleep(0.1)
        self.stop()
        raise BrokerError(f"embedded broker did not answer on {self.bootstrap} "
                          f"within {self.startup_timeout:.0f}s")

    def stop(self) -> None:
        proc, self.process = self.process, None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=10)
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
            self.data_dir = None

    def _log_tail(self) -> str:
        path = self.log_path or (self.data_dir and self.data_dir / "broker.log")
        if path and Path(path).exists():
            return Path(path).read_text(errors="replace")[-2000:]
        return "(no broker log)"

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

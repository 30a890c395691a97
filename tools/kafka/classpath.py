"""The Apache Kafka broker's Java classpath, resolved by Maven from ``tools/kafka/pom.xml``.

``mvn -q dependency:build-classpath`` downloads the pinned ``kafka_2.13`` and its dependencies
into the Maven cache (``~/.m2``) once; the resulting classpath is cached in
``~/.cache/judgeflow/`` under a name derived from the pom's content, so a later run (or a
pytest session) starts no Maven at all. ``make bootstrap`` runs ``python -m
tools.kafka`` to do this up front; without Java or Maven it says why and the Apache
Kafka tests skip with the same reason.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tools.broker import BrokerError

POM = Path(__file__).resolve().parent / "pom.xml"
KAFKA_VERSION = re.search(r"<kafka.version>([^<]+)</kafka.version>", POM.read_text())[1]  # type: ignore[index]
# The pinned jars are Java 17 class files (major version 61): OpenJDK 17 runs them.


class KafkaUnavailable(BrokerError):
    """Apache Kafka cannot run here (no Java, no Maven, or Maven could not resolve it)."""


def java_binary() -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    java = shutil.which("java")
    if java is None:
        raise KafkaUnavailable("Apache Kafka needs Java 17+: no `java` on PATH (apt-get install "
                               "openjdk-17-jre-headless, or set JAVA_HOME)")
    return java


def cache_file() -> Path:
    digest = hashlib.sha256(POM.read_bytes()).hexdigest()[:12]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "judgeflow" / f"kafka-{KAFKA_VERSION}-{digest}.classpath"


def _cached() -> str | None:
    path = cache_file()
    if not path.is_file():
        return None
    cp = path.read_text().strip()
    jars = cp.split(os.pathsep)
    if not cp or not all(Path(j).is_file() for j in jars):  # ~/.m2 was cleaned meanwhile
        return None
    return cp


def kafka_classpath(*, resolve: bool = True) -> str:
    """The broker's classpath (``:``-joined jars). Runs Maven once when not cached."""
    java_binary()
    cp = _cached()
    if cp is not None:
        return cp
    if not resolve:
        raise KafkaUnavailable(f"Apache Kafka's classpath is not cached yet ({cache_file()})")
    mvn = shutil.which("mvn")
    if mvn is None:
        raise KafkaUnavailable("Apache Kafka's classpath comes from Maven: no `mvn` on PATH "
                               "(apt-get install maven)")
    out = cache_file()
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    cmd = [mvn, "-q", "-B", "-f", str(POM), "dependency:build-classpath",
           f"-Dmdep.outputFile={tmp}"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise KafkaUnavailable(f"{' '.join(cmd)} took more than 15 min") from None
    if proc.returncode != 0 or not tmp.is_file():
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
        raise KafkaUnavailable(f"Maven could not resolve Apache Kafka {KAFKA_VERSION} "
                               f"({' '.join(cmd)} exit {proc.returncode}): {' | '.join(tail)}")
    tmp.replace(out)
    cp = _cached()
    if cp is None:
        raise KafkaUnavailable(f"Maven wrote an empty or stale classpath to {out}")
    return cp


def main() -> int:
    """``python -m tools.kafka``: resolve and cache (``make bootstrap``). Never fails
    the bootstrap: without Java/Maven the Apache Kafka tests skip, and this says why."""
    try:
        cp = kafka_classpath()
    except KafkaUnavailable as exc:
        print(f"==> Apache Kafka tests will skip: {exc}", file=sys.stderr)
        return 0
    print(f"==> Apache Kafka {KAFKA_VERSION}: {len(cp.split(os.pathsep))} jars "
          f"(classpath cached in {cache_file()})")
    return 0


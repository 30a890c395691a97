"""An encrypted client key over mutual TLS on Apache Kafka: ``judgeflow tail`` with
JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD_FILE reads as the certificate's principal (the client
factory decrypts the key), without the password it stops in one line, and kcat reads the same
record with the librdkafka translation (``ssl.key.password``)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from streams import kafka_clients
from streams.kafka_acls import Acl
from streams.kafka_security import librdkafka_properties
from streams.kafka_settings import KafkaSettings
from streams.topics import send_all
from tests.acl_admin import grant
from tests.kafka import apache_kafka_or_skip
from tools.kafka import ApacheKafka

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
TOPIC = "keypw.records.v1"
KCAT = shutil.which("kcat") or shutil.which("kafkacat")


@pytest.fixture(scope="module")
def kafka() -> Iterator[ApacheKafka]:
    with apache_kafka_or_skip(secure=True) as k:
        yield k


@pytest.fixture(scope="module")
def env(kafka: ApacheKafka, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The JUDGEFLOW_KAFKA__* of a client whose key is encrypted, its password in a file;
    one record on TOPIC that its principal may read."""
    import asyncio

    work = tmp_path_factory.mktemp("keypw")
    cert = kafka.client_cert("keypw")
    key = work / "client.enc.key"
    subprocess.run(["openssl", "pkey", "-in", str(cert.key), "-aes256", "-passout",
                    "pass:s3cret-key", "-out", str(key)], check=True, capture_output=True,
                   timeout=30)
    password = work / "key-password"
    password.write_text("s3cret-key\n")

    async def one_record() -> None:
        from aiokafka.admin import NewTopic

        admin = kafka_clients.admin(kafka.bootstrap)
        await admin.start()
        try:
            await admin.create_topics([NewTopic(TOPIC, 1, 1)])
        finally:
            await admin.close()
        await send_all(kafka.bootstrap, TOPIC, [(None, b'{"encrypted": "key"}')])

    asyncio.run(one_record())
    grant(kafka.bootstrap, "User:keypw", [Acl("topic", TOPIC, "Read", "test")])
    return {"JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS": kafka.bootstrap_for("SSL"),
            "JUDGEFLOW_KAFKA__SECURITY_PROTOCOL": "SSL",
            "JUDGEFLOW_KAFKA__SSL_CAFILE": str(kafka.ca_file),
            "JUDGEFLOW_KAFKA__SSL_CERTFILE": str(cert.cert),
            "JUDGEFLOW_KAFKA__SSL_KEYFILE": str(key),
            "JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD_FILE": str(password),
            "JUDGEFLOW_KAFKA__BROKER": "kafka"}


def tail(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("JUDGEFLOW_")}
    return subprocess.run([sys.executable, "-m", "cli.main", "tail", TOPIC, "--from-beginning",
                           "--max", "1", "--idle-timeout", "20"], cwd=REPO,
                          env={**clean, **env}, capture_output=True, text=True, timeout=90,
                          stdin=subprocess.DEVNULL)


def test_tail_reads_with_an_encrypted_key_and_its_password_file(env: dict[str, str]) -> None:
    proc = tail(env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().replace(" ", "") == '{"encrypted":"key"}'


def test_without_the_password_tail_stops_in_one_line(env: dict[str, str]) -> None:
    proc = tail({k: v for k, v in env.items() if k != "JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD_FILE"})
    assert proc.returncode != 0
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines == ["judgeflow: the client key is encrypted: set "
                     "JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD or "
                     "JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD_FILE"], proc.stderr


@pytest.mark.skipif(KCAT is None, reason="kcat not installed (apt-get install kcat)")
def test_kcat_reads_with_the_translated_key_password(env: dict[str, str]) -> None:
    fields = {name.removeprefix("JUDGEFLOW_KAFKA__").lower(): value for name, value in env.items()}
    props = librdkafka_properties(KafkaSettings(**fields))
    assert props["ssl.key.password"] == "s3cret-key"
    args = [a for name, value in props.items() if name != "bootstrap.servers"
            for a in ("-X", f"{name}={value}")]
    proc = subprocess.run([str(KCAT), "-b", props["bootstrap.servers"], *args, "-C", "-t", TOPIC,
                           "-c", "1", "-e", "-q"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == '{"encrypted": "key"}'

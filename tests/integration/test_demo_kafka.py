"""``judgeflow demo`` on Apache Kafka: on a 1-node cluster it starts itself (``--broker
apache``), and on a cluster the user points it at, PLAINTEXT and SASL_SSL (SCRAM, a private
CA, a least-privilege user whose only ACLs are prefixed ones on ``judgeflow-demo-``). The
summary is the embedded broker's (tests/integration/test_demo.py has the same figures);
on a user's cluster nothing that was there is touched and nothing of the demo is left; a
wrong password or an unreachable cluster is one line within seconds."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest

from streams import kafka_clients
from streams.topics import read_to_end, send_all
from tests.kafka import apache_kafka_or_skip
from tools.kafka import ApacheKafka

pytestmark = pytest.mark.integration
#: a refused login or an unreachable address takes about a second to be said
FAIL_FAST_SECONDS = 15.0
BYSTANDER = "payments.ledger.v1"  # a topic of the user's that the demo must leave alone


@pytest.fixture(scope="module")
def kafka() -> Iterator[ApacheKafka]:
    with apache_kafka_or_skip(secure=True, users={"demo": "demo-pw"}) as k:
        # what docs tell a cluster admin to grant a user who runs the demo, and nothing more
        k.add_acl("User:demo", ["All"], topic="judgeflow-demo-", group="judgeflow-demo-",
                  prefixed=True)
        asyncio.run(send_all(k.bootstrap, BYSTANDER, [(b"k", b"do not touch")]))
        yield k


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JUDGEFLOW_", "ANTHROPIC_"))}
    return {**env, **extra}


def demo(argv: list[str], env: dict[str, str],
         timeout: float = 400) -> tuple[subprocess.CompletedProcess[str], float]:
    began = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "cli.main", *argv], env=env,
                          capture_output=True, text=True, timeout=timeout)
    return proc, time.monotonic() - began


def assert_the_embedded_summary(proc: subprocess.CompletedProcess[str]) -> None:
    out = proc.stdout
    assert proc.returncode == 0, out[-3000:] + proc.stderr[-3000:]
    assert "ground truth: 425/425 cells match" in out
    assert re.search(r"complete: cells decided 425/425, judge jobs (\d+), judge results \1/\1, "
                     r"evaluations 11/11, dead letters 8", out)
    assert "Judge results (97)" in out and "Debrief evaluations (11)" in out
    assert "status: {'ok': 94, 'flagged': 3}; LLM calls 0" in out
    assert out.count("safety breach: yes") == 5
    # the dead-letter table names the topics as on the embedded broker (no run prefix)
    assert re.search(r"^\s*chart-review\.agent-answers\.v1\.dlq\s", out, re.M), out
    assert "Traceback" not in out + proc.stderr


async def cluster_state(bootstrap: str) -> tuple[set[str], set[str], list[bytes]]:
    admin = kafka_clients.admin(bootstrap)
    await admin.start()
    try:
        # the broker's own (__consumer_offsets appears with the first consumer group)
        topics = {t for t in await admin.list_topics() if not t.startswith("__")}
        groups = {g for g, *_ in await admin.list_consumer_groups()}
    finally:
        await admin.close()
    values = [rec.value async for rec in read_to_end(bootstrap, [BYSTANDER])]
    return topics, groups, values


def assert_left_as_it_was(k: ApacheKafka, before: tuple[Any, ...], out: str) -> None:
    tidy = re.search(r"deleted the (\d+) topic\(s\) and (\d+) consumer group\(s\) it created "
                     r"under (judgeflow-demo-\S+)", out)
    assert tidy is not None and int(tidy.group(1)) >= 14, out[-2000:]
    assert asyncio.run(cluster_state(k.bootstrap)) == before


def test_demo_starts_apache_kafka_itself_and_stops_it() -> None:
    proc, _ = demo(["demo", "--broker", "apache", "--keep-logs"], clean_env())
    assert_the_embedded_summary(proc)
    assert re.search(r"on the Apache Kafka 4\.\d+\.\d+ 127\.0\.0\.1:\d+ \(up in", proc.stdout)
    work = re.search(r"logs in (\S+)\)", proc.stdout)
    assert work is not None
    left = subprocess.run(["pgrep", "-f", work.group(1)], capture_output=True, text=True)
    assert left.stdout.strip() == "", f"processes left running: {left.stdout}"
    subprocess.run(["rm", "-rf", work.group(1)], check=True)


def test_demo_on_a_plaintext_cluster_touches_nothing_of_the_users(kafka: ApacheKafka) -> None:
    before = asyncio.run(cluster_state(kafka.bootstrap))
    proc, _ = demo(["--bootstrap-servers", kafka.bootstrap, "demo"], clean_env())
    assert_the_embedded_summary(proc)
    assert f"running on the configured cluster {kafka.bootstrap} (PLAINTEXT)" in proc.stdout
    assert "starting the embedded broker" not in proc.stdout
    assert_left_as_it_was(kafka, before, proc.stdout)


def sasl_env(k: ApacheKafka, password: str = "demo-pw", **extra: str) -> dict[str, str]:
    return clean_env(JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS=k.bootstrap_for("SASL_SSL"),
                     JUDGEFLOW_KAFKA__SECURITY_PROTOCOL="SASL_SSL",
                     JUDGEFLOW_KAFKA__SASL_MECHANISM="SCRAM-SHA-512",
                     JUDGEFLOW_KAFKA__SASL_USERNAME="demo",
                     JUDGEFLOW_KAFKA__SASL_PASSWORD=password,
                     JUDGEFLOW_KAFKA__SSL_CAFILE=str(k.ca_file), **extra)


def test_demo_over_sasl_ssl_as_a_user_with_prefixed_acls_only(kafka: ApacheKafka) -> None:
    before = asyncio.run(cluster_state(kafka.bootstrap))
    proc, _ = demo(["demo"], sasl_env(kafka))
    assert_the_embedded_summary(proc)
    assert "(SASL_SSL); topics and groups under judgeflow-demo-" in proc.stdout
    assert "demo-pw" not in proc.stdout + proc.stderr
    assert_left_as_it_was(kafka, before, proc.stdout)


@pytest.mark.parametrize("case", ["wrong password", "unreachable", "taken prefix"])
def test_a_refusal_is_one_line_within_seconds(kafka: ApacheKafka, case: str) -> None:
    argv, env = ["demo"], sasl_env(kafka)
    if case == "wrong password":
        env = sasl_env(kafka, password="not-the-password")
    elif case == "unreachable":
        env = clean_env()
        argv = ["--bootstrap-servers", "127.0.0.1:1", "demo"]
    else:  # a prefix under which a topic exists already: the demo would write into it
        env = clean_env()
        argv = ["--bootstrap-servers", kafka.bootstrap, "demo", "--topic-prefix", "payments."]
        asyncio.run(send_all(kafka.bootstrap, "payments.chart-review.agent-answers.v1",
                             [(b"k", b"theirs")]))
    before = asyncio.run(cluster_state(kafka.bootstrap))
    proc, elapsed = demo(argv, env, timeout=60)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode in (1, 2) and len(lines) == 1, proc.stdout + proc.stderr
    assert elapsed < FAIL_FAST_SECONDS
    expected = {"wrong password": "refused SASL SCRAM-SHA-512 login as 'demo': wrong "
                "username or password", "unreachable": "cannot reach Kafka at 127.0.0.1:1",
                "taken prefix": "topic payments.chart-review.agent-answers.v1 already exists"}
    assert lines[0].startswith("judgeflow: ") and expected[case] in lines[0], lines[0]
    assert "starting" not in proc.stdout and "produced" not in proc.stdout
    assert asyncio.run(cluster_state(kafka.bootstrap)) == before

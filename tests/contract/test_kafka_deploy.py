"""deploy/ against the least-privilege data (streams/kafka_acls.py): the Strimzi KafkaUsers are
exactly what ``judgeflow kafka acls --strimzi`` generates, every worker Deployment logs in as
its own user with that user's Secret mounted, the shared topics exist as KafkaTopics, and
docs/security.md lists every ACL."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from cli.kafka import kafka_users, user_name
from streams.kafka_acls import ROLES, faust_internal_topics, role_acls, role_topics
from streams.kafka_check import shown_name
from streams.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
STRIMZI = K8S / "strimzi"


def docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def deployments() -> list[dict[str, Any]]:
    return [d for p in sorted(K8S.glob("*.yaml")) for d in docs(p) if d["kind"] == "Deployment"]


def role_of(container: dict[str, Any]) -> str:
    """The Kafka role a container runs as: a worker's own, the review page's ``reviewer``."""
    args = container["args"]
    return "reviewer" if args[0] == "dashboard" else str(args[1])


def pod_env(configmap: dict[str, Any], container: dict[str, Any],
            tmp_path: Path) -> dict[str, str]:
    """The environment a container sees (ConfigMap, then its own plain ``env`` values),
    with every mounted file it names replaced by an existing file under ``tmp_path``."""
    env = {**configmap["data"], **{e["name"]: e["value"] for e in container.get("env", [])
                                   if "value" in e}}
    for name, value in env.items():
        if value.startswith("/etc/judgeflow/"):
            fake = tmp_path / value.strip("/").replace("/", "_")
            fake.write_text("mounted\n")
            env[name] = str(fake)
    return env


def test_kafka_users_are_generated_from_the_acl_data() -> None:
    want = kafka_users(Settings(), list(ROLES), "kafka", "scram-sha-512")
    assert docs(STRIMZI / "users.yaml") == want, (
        "deploy/k8s/strimzi/users.yaml is stale: regenerate it with "
        "`judgeflow kafka acls --strimzi` (keep its header)")


def _mounts(container: dict[str, Any], pod: dict[str, Any]) -> dict[str, str]:
    """mount path -> Secret name, for the container's Secret volumes."""
    secrets = {v["name"]: v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v}
    return {m["mountPath"]: secrets[m["name"]] for m in container["volumeMounts"]
            if m["name"] in secrets}


def test_every_worker_logs_in_as_its_own_user_with_its_secret_mounted(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (configmap,) = [d for d in docs(K8S / "configmap.yaml") if d["kind"] == "ConfigMap"]
    seen = set()
    for dep in deployments():
        pod = dep["spec"]["template"]["spec"]
        for container in pod["containers"]:
            role = role_of(container)
            seen.add(role)
            env = {e["name"]: e.get("value") for e in container["env"]}
            assert env["JUDGEFLOW_KAFKA__SASL_USERNAME"] == user_name(role)
            mounts = _mounts(container, pod)
            password = env["JUDGEFLOW_KAFKA__SASL_PASSWORD_FILE"]
            assert mounts[str(Path(password).parent)] == user_name(role)  # its own Secret
            ca = configmap["data"]["JUDGEFLOW_KAFKA__SSL_CAFILE"]
            assert mounts[str(Path(ca).parent)] == "judgeflow-kafka-ca"
            for name in [n for n in os.environ if n.startswith("JUDGEFLOW_")]:
                monkeypatch.delenv(name)
            for name, value in pod_env(configmap, container, tmp_path).items():
                monkeypatch.setenv(name, value)
            k = Settings().kafka
            assert (k.security_protocol, k.sasl_mechanism, k.broker) == (
                "SASL_SSL", "SCRAM-SHA-512", "kafka")
    assert seen <= set(ROLES) and {"calibrate", "reviewer"} <= seen


def test_the_shared_topics_are_kafka_topics() -> None:
    s = Settings()
    declared = {d["spec"]["topicName"] for d in docs(STRIMZI / "topics.yaml")
                if d["kind"] == "KafkaTopic"}
    needed = {t for role in ROLES for t in role_topics(role, s)}
    assert needed <= declared
    assert not declared & set(faust_internal_topics(s))  # the detector creates its own
    parts = {d["spec"]["topicName"]: d["spec"]["partitions"] for d in docs(STRIMZI / "topics.yaml")}
    assert parts[s.topics.detect_ticks] == parts[s.topics.agent_answers]  # co-partitioned


def test_the_security_doc_lists_every_acl() -> None:
    text = (ROOT / "docs" / "security.md").read_text()
    s = Settings()
    for role in ROLES:
        for a in role_acls(role, s):
            row = f"| {role} | {a.resource} `{shown_name(a)}` | {a.operation} |"
            assert row in text, f"docs/security.md lacks the row {row}"

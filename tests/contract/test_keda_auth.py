"""KEDA's Kafka scaler can log in to the cluster the workers use: its TriggerAuthentication
speaks the ConfigMap's SASL_SSL / SCRAM-SHA-512 with the CA Secret the workers mount and the
password Secret of its own KafkaUser, every ScaledObject trigger uses it, and that user has
exactly the ACLs the scaler's requests need (Describe on each watched topic and group).

KEDA's CRDs are not in kubernetes-validate, so the field names are checked against the
parameters KEDA's Apache Kafka scaler documents (https://keda.sh/docs/latest/scalers/
apache-kafka/, "Authentication Parameters"), the check a strict schema would make."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from cli.kafka import user_name

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "deploy" / "k8s"
KEDA = K8S / "keda"
KEDA_USER = K8S / "strimzi" / "keda-user.yaml"
#: The Kafka scaler's authParams (KEDA docs, "Authentication Parameters": SASL and TLS).
KAFKA_AUTH_PARAMS = {"sasl", "saslTokenProvider", "username", "password", "keytab", "realm",
                     "kerberosConfig", "kerberosServiceName", "kerberosDisableFAST",
                     "oauthTokenEndpointUri", "scopes", "oauthExtensions", "tls", "ca",
                     "cert", "key", "keyPassword"}
#: KEDA's names for our SASL mechanisms (its ``sasl`` parameter) and Strimzi's.
KEDA_SASL = {"PLAIN": "plaintext", "SCRAM-SHA-256": "scram_sha256",
             "SCRAM-SHA-512": "scram_sha512", "OAUTHBEARER": "oauthbearer"}
STRIMZI_AUTH = {"SCRAM-SHA-512": "scram-sha-512"}


def docs(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d]


def keda_objects(kind: str) -> list[dict[str, Any]]:
    return [d for p in sorted(KEDA.glob("*.yaml")) for d in docs(p) if d["kind"] == kind]


def one(kind: str) -> dict[str, Any]:
    (obj,) = keda_objects(kind)
    return obj


def auth_params(ta: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    """parameter -> (source kind, object name, key) of a TriggerAuthentication."""
    spec = ta["spec"]
    assert set(spec) <= {"secretTargetRef", "configMapTargetRef"}, set(spec)
    params: dict[str, tuple[str, str, str]] = {}
    for source, kind in (("secretTargetRef", "Secret"), ("configMapTargetRef", "ConfigMap")):
        for ref in spec.get(source, []):
            assert set(ref) == {"parameter", "name", "key"}, ref
            assert ref["parameter"] in KAFKA_AUTH_PARAMS, ref["parameter"]
            assert ref["parameter"] not in params, f"{ref['parameter']} given twice"
            params[ref["parameter"]] = (kind, ref["name"], ref["key"])
    return params


def worker_configmap() -> dict[str, str]:
    (cm,) = [d for d in docs(K8S / "configmap.yaml") if d["kind"] == "ConfigMap"]
    return cm["data"]  # type: ignore[no-any-return]


def worker_ca_secret() -> str:
    """The Secret every worker Deployment mounts at the ConfigMap's SSL_CAFILE directory."""
    ca_dir = str(Path(worker_configmap()["JUDGEFLOW_KAFKA__SSL_CAFILE"]).parent)
    names = set()
    for dep in [d for d in docs(K8S / "deployments.yaml") if d["kind"] == "Deployment"]:
        pod = dep["spec"]["template"]["spec"]
        secrets = {v["name"]: v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v}
        for c in pod["containers"]:
            names |= {secrets[m["name"]] for m in c["volumeMounts"] if m["mountPath"] == ca_dir}
    (name,) = names
    return name


def test_every_scaled_object_trigger_logs_in_with_the_trigger_authentication() -> None:
    ta = one("TriggerAuthentication")
    assert ta["apiVersion"] == "keda.sh/v1alpha1"
    triggers = [t for so in keda_objects("ScaledObject") for t in so["spec"]["triggers"]]
    assert len(triggers) == 2
    for t in triggers:
        assert t["authenticationRef"] == {"name": ta["metadata"]["name"]}, t
        # sasl/tls come from the TriggerAuthentication only: no second, diverging copy
        assert not {"sasl", "tls", "unsafeSsl"} & set(t["metadata"]), t["metadata"]


def test_the_trigger_authentication_matches_the_workers_security_settings() -> None:
    data = worker_configmap()
    params = auth_params(one("TriggerAuthentication"))
    assert {"sasl", "tls", "username", "password", "ca"} <= set(params)
    assert not {"cert", "key", "keyPassword"} & set(params)  # SCRAM, not mutual TLS
    configmap = one("ConfigMap")
    values: dict[str, str] = {}
    for param, (kind, name, key) in params.items():
        if kind == "ConfigMap":
            assert name == configmap["metadata"]["name"]
            values[param] = configmap["data"][key]
    assert data["JUDGEFLOW_KAFKA__SECURITY_PROTOCOL"] == "SASL_SSL"
    assert values["tls"] == "enable"
    assert values["sasl"] == KEDA_SASL[data["JUDGEFLOW_KAFKA__SASL_MECHANISM"]]
    (user,) = docs(KEDA_USER)
    assert values["username"] == user["metadata"]["name"] == user_name("keda")
    # Strimzi's User Operator writes a SCRAM user's password to a Secret named after the
    # KafkaUser, key "password" (copied into judgeflow's namespace under the same name)
    assert user["spec"]["authentication"]["type"] == STRIMZI_AUTH[
        data["JUDGEFLOW_KAFKA__SASL_MECHANISM"]]
    assert params["password"] == ("Secret", user["metadata"]["name"], "password")
    # the CA the workers trust, by the file name they read it from
    ca_key = Path(data["JUDGEFLOW_KAFKA__SSL_CAFILE"]).name
    assert params["ca"] == ("Secret", worker_ca_secret(), ca_key) == (
        "Secret", "judgeflow-kafka-ca", "ca.crt")


def test_the_keda_user_has_exactly_describe_on_the_watched_topics_and_groups() -> None:
    (user,) = docs(KEDA_USER)
    assert (user["apiVersion"], user["kind"]) == ("kafka.strimzi.io/v1beta2", "KafkaUser")
    (users_yaml_first, *_) = docs(K8S / "strimzi" / "users.yaml")
    assert user["metadata"]["labels"] == users_yaml_first["metadata"]["labels"]  # same cluster
    assert user["spec"]["authorization"]["type"] == "simple"
    granted = set()
    for acl in user["spec"]["authorization"]["acls"]:
        assert set(acl) == {"resource", "operations", "host"} and acl["host"] == "*"
        assert acl["resource"]["patternType"] == "literal"
        granted |= {(acl["resource"]["type"], acl["resource"]["name"], op)
                    for op in acl["operations"]}
    needed = set()
    for so in keda_objects("ScaledObject"):
        for t in so["spec"]["triggers"]:
            needed |= {("topic", t["metadata"]["topic"], "Describe"),
                       ("group", t["metadata"]["consumerGroup"], "Describe")}
    assert granted == needed


def test_the_keda_configmap_passes_strict_schema_validation() -> None:
    version = kubernetes_validate.latest_version()
    kubernetes_validate.validate(one("ConfigMap"), version, strict=True)


@pytest.mark.parametrize("path", [*sorted(KEDA.glob("*.yaml")), KEDA_USER], ids=lambda p: p.name)
def test_the_keda_files_name_only_objects_kubectl_apply_dir_can_create(path: Path) -> None:
    """``kubectl apply -f deploy/k8s/keda/`` applies every file there: only KEDA's kinds and
    the ConfigMap they read, no namespace baked in (the -n flag chooses it)."""
    for obj in docs(path):
        assert obj["kind"] in {"ScaledObject", "TriggerAuthentication", "ConfigMap",
                               "KafkaUser"}, obj["kind"]
        assert "namespace" not in obj["metadata"], path


def test_the_security_doc_lists_the_keda_users_acls() -> None:
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    (user,) = docs(KEDA_USER)
    name = user["metadata"]["name"]
    rows = [line for line in text.splitlines() if line.startswith(f"| {name} |")]
    want = {f"| {name} | {acl['resource']['type']} "
            f"`{acl['resource']['name']}` | {op} |"
            for acl in user["spec"]["authorization"]["acls"] for op in acl["operations"]}
    assert {row.rsplit("|", 2)[0] + "|" for row in rows} == want

"""The one Kafka client factory: what each security setting produces for aiokafka and for
Faust, which broker gets the embedded-broker work-arounds, and that no client is made
anywhere else."""

from __future__ import annotations

import re
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiokafka import errors as kerr
from faust.auth import OAuthCredentials, SASLCredentials, SSLCredentials
from faust.transport.drivers.aiokafka import credentials_to_aiokafka_auth

from streams import fetch_backoff, kafka_clients
from streams.kafka_access import ClusterInfo, KafkaUnreachable, explain, is_fatal
from streams.kafka_security import (
    FileTokenProvider,
    HookTokenProvider,
    KafkaSetupError,
    aiokafka_auth,
    faust_credentials,
    ssl_context,
)
from streams.kafka_settings import KafkaSettings
from tools.kafka.certs import CertPair, TestCA
from tools.kafka.classpath import KafkaUnavailable

REPO = Path(__file__).resolve().parents[3]
NOIDA_ID = next(iter(kafka_clients.EMBEDDED_CLUSTER_IDS))


@pytest.fixture(scope="module")
def ca(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestCA]:
    try:
        yield TestCA(tmp_path_factory.mktemp("ca"))
    except KafkaUnavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def client(ca: TestCA) -> CertPair:
    return ca.issue("alice")


def scram(ca: TestCA, **over: Any) -> KafkaSettings:
    return KafkaSettings(**{"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512",
                            "sasl_username": "alice", "sasl_password": "pw",
                            "ssl_cafile": ca.ca_file, **over})


def test_plaintext_is_plain_for_aiokafka_and_faust() -> None:
    k = KafkaSettings(bootstrap_servers="a:1,b:2")
    assert aiokafka_auth(k) == {"security_protocol": "PLAINTEXT"}
    assert faust_credentials(k) is None
    assert kafka_clients.faust_options(k) == {"broker": "kafka://a:1;kafka://b:2"}


def test_tls_trusts_the_private_ca_and_checks_hostnames(ca: TestCA) -> None:
    ctx = ssl_context(KafkaSettings(security_protocol="SSL", ssl_cafile=ca.ca_file))
    assert ctx is not None
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
    subjects = [dict(x[0] for x in c["subject"]) for c in ctx.get_ca_certs()]
    assert {"commonName": "judgeflow-test-ca"} in subjects
    off = ssl_context(KafkaSettings(security_protocol="SSL", ssl_cafile=ca.ca_file,
                                    ssl_check_hostname=False))
    assert off is not None and not off.check_hostname and off.verify_mode == ssl.CERT_REQUIRED


def test_mutual_tls_loads_the_client_certificate(ca: TestCA, client: CertPair) -> None:
    k = KafkaSettings(security_protocol="SSL", ssl_cafile=ca.ca_file, ssl_certfile=client.cert,
                      ssl_keyfile=client.key)
    auth = aiokafka_auth(k)
    assert auth["security_protocol"] == "SSL" and isinstance(auth["ssl_context"], ssl.SSLContext)
    creds = faust_credentials(k)
    assert isinstance(creds, SSLCredentials)
    assert credentials_to_aiokafka_auth(creds)["security_protocol"] == "SSL"


def test_a_key_that_does_not_match_is_one_line(ca: TestCA, client: CertPair) -> None:
    other = ca.issue("bob")
    k = KafkaSettings(security_protocol="SSL", ssl_cafile=ca.ca_file, ssl_certfile=client.cert,
                      ssl_keyfile=other.key)
    with pytest.raises(KafkaSetupError) as err:
        ssl_context(k)
    assert "JUDGEFLOW_KAFKA__SSL_CAFILE/_CERTFILE/_KEYFILE" in str(err.value)
    assert "\n" not in str(err.value)


@pytest.fixture(scope="module")
def encrypted(client: CertPair, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``client``'s key encrypted (PKCS#8, AES-256) with the password "k3y-pass"."""
    import subprocess

    path = tmp_path_factory.mktemp("enc") / "client.enc.key"
    subprocess.run(["openssl", "pkey", "-in", str(client.key), "-aes256", "-passout",
                    "pass:k3y-pass", "-out", str(path)], check=True, capture_output=True,
                   timeout=30)
    assert "ENCRYPTED" in path.read_text()
    return path


def test_an_encrypted_client_key_loads_with_its_password(
        ca: TestCA, client: CertPair, encrypted: Path, tmp_path: Path) -> None:
    from streams.kafka_security import librdkafka_properties

    base = {"security_protocol": "SSL", "ssl_cafile": ca.ca_file,
            "ssl_certfile": client.cert, "ssl_keyfile": encrypted}
    secret = tmp_path / "key-password"
    secret.write_text("k3y-pass\n")
    for k in (KafkaSettings(**base, ssl_key_password="k3y-pass"),
              KafkaSettings(**base, ssl_key_password_file=secret)):
        auth = aiokafka_auth(k)  # what every aiokafka client gets from the factory
        assert isinstance(auth["ssl_context"], ssl.SSLContext)
        creds = faust_credentials(k)
        assert isinstance(creds, SSLCredentials)
        assert librdkafka_properties(k)["ssl.key.password"] == "k3y-pass"
        assert "k3y-pass" not in repr(k)


@pytest.mark.parametrize(("password", "message"), [
    (None, "the client key is encrypted: set JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD or "
     "JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD_FILE"),
    ("wrong", "the client key is encrypted and the password in "
     "JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD(_FILE) does not decrypt it")])
def test_an_encrypted_key_without_its_password_is_one_line_never_a_prompt(
        ca: TestCA, client: CertPair, encrypted: Path, password: str | None,
        message: str) -> None:
    """Without a password OpenSSL would ask on the terminal (a hang for a worker): the
    factory always passes one, so a missing or wrong one is this line."""
    k = KafkaSettings(security_protocol="SSL", ssl_cafile=ca.ca_file,
                      ssl_certfile=client.cert, ssl_keyfile=encrypted,
                      ssl_key_password=password)
    with pytest.raises(KafkaSetupError) as err:
        ssl_context(k)
    assert str(err.value) == message  # names the variable, never the value


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_sasl_ssl_gives_aiokafka_and_faust_the_same_arguments(ca: TestCA,
                                                               mechanism: str) -> None:
    k = scram(ca, sasl_mechanism=mechanism)
    ours = aiokafka_auth(k)
    assert {key: ours[key] for key in ("security_protocol", "sasl_mechanism",
                                       "sasl_plain_username", "sasl_plain_password")} == {
        "security_protocol": "SASL_SSL", "sasl_mechanism": mechanism,
        "sasl_plain_username": "alice", "sasl_plain_password": "pw"}
    creds = faust_credentials(k)
    assert isinstance(creds, SASLCredentials)
    theirs = credentials_to_aiokafka_auth(creds)
    for key in ("security_protocol", "sasl_mechanism", "sasl_plain_username",
                "sasl_plain_password"):
        assert theirs[key] == ours[key], key
    assert isinstance(theirs["ssl_context"], ssl.SSLContext)
    assert "pw" not in repr(creds)


def test_sasl_plaintext_has_no_tls_context() -> None:
    k = KafkaSettings(security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                      sasl_username="u", sasl_password="p")
    assert "ssl_context" not in aiokafka_auth(k)
    creds = faust_credentials(k)
    assert credentials_to_aiokafka_auth(creds)["security_protocol"] == "SASL_PLAINTEXT"


def _token() -> str:
    return "hook-token"


async def _async_token() -> str:
    return "async-token"


async def test_oauthbearer_token_file_is_read_at_every_authentication(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("first\n")
    k = KafkaSettings(security_protocol="SASL_SSL", sasl_mechanism="OAUTHBEARER",
                      sasl_oauth_token_file=token)
    provider = aiokafka_auth(k)["sasl_oauth_token_provider"]
    assert isinstance(provider, FileTokenProvider)
    assert await provider.token() == "first"
    token.write_text("rotated")  # a projected token replaced in place
    assert await provider.token() == "rotated"
    creds = faust_credentials(k)
    assert isinstance(creds, OAuthCredentials)
    assert credentials_to_aiokafka_auth(creds)["sasl_mechanism"] == "OAUTHBEARER"


@pytest.mark.parametrize(("hook", "want"), [("_token", "hook-token"),
                                            ("_async_token", "async-token")])
async def test_oauthbearer_hook_returns_the_token(hook: str, want: str) -> None:
    k = KafkaSettings(security_protocol="SASL_SSL", sasl_mechanism="OAUTHBEARER",
                      sasl_oauth_token_provider=f"{__name__}:{hook}")
    provider = aiokafka_auth(k)["sasl_oauth_token_provider"]
    assert isinstance(provider, HookTokenProvider)
    assert await provider.token() == want


def test_an_unloadable_hook_is_one_line() -> None:
    k = KafkaSettings(security_protocol="SASL_SSL", sasl_mechanism="OAUTHBEARER",
                      sasl_oauth_token_provider="no_such_module_x:fetch")
    with pytest.raises(KafkaSetupError, match="SASL_OAUTH_TOKEN_PROVIDER=no_such_module_x"):
        aiokafka_auth(k)


async def test_factory_clients_carry_the_security_settings(ca: TestCA) -> None:
    k = scram(ca)
    consumer = kafka_clients.consumer(k, "t", group_id="g")
    producer = kafka_clients.producer(k, acks="all")
    admin = kafka_clients.admin(k)
    for c in (consumer._client, producer.client, admin._client):
        assert c._security_protocol == "SASL_SSL"
        assert c._sasl_mechanism == "SCRAM-SHA-512"
        assert c._sasl_plain_username == "alice"
        assert isinstance(c._ssl_context, ssl.SSLContext)
        assert c._bootstrap_servers == k.bootstrap_servers
    await consumer.stop()
    await producer.stop()
    await admin.close()


def test_a_bare_address_is_one_plaintext_settings_object() -> None:
    a = kafka_clients.kafka_settings("127.0.0.1:1")
    assert a is kafka_clients.kafka_settings("127.0.0.1:1")
    assert a.security_protocol == "PLAINTEXT"


@pytest.mark.parametrize(("setting", "cluster_id", "want"), [
    ("auto", NOIDA_ID, "noida-db 0.2.3"),
    ("auto", "4L6g3nShT-eMCtK--X86sw", None),  # a real Kafka cluster id
    ("auto", None, None),
    ("kafka", NOIDA_ID, None),  # told it is not the embedded broker: no work-arounds
    ("embedded", NOIDA_ID, "noida-db 0.2.3"),
    ("embedded", "4L6g3nShT-eMCtK--X86sw", "embedded broker"),
])
def test_only_the_embedded_broker_gets_its_work_arounds(setting: str, cluster_id: str | None,
                                                        want: str | None) -> None:
    k = KafkaSettings(broker=setting)
    info = ClusterInfo("127.0.0.1:9092", cluster_id, {})
    assert kafka_clients.embedded_name(k, info) == want


class _Client:
    def __init__(self, bootstrap: Any) -> None:
        self._bootstrap_servers = bootstrap


def test_fetch_backoff_pauses_only_the_registered_cluster() -> None:
    assert fetch_backoff.install_idle_fetch_backoff("127.0.0.1:65001", 30)
    assert fetch_backoff._pause_for(_Client("127.0.0.1:65001")) == pytest.approx(0.03)
    assert fetch_backoff._pause_for(_Client(["127.0.0.1:65001"])) == pytest.approx(0.03)  # Faust
    assert fetch_backoff._pause_for(_Client("127.0.0.1:65002")) == 0.0
    assert not fetch_backoff.install_idle_fetch_backoff("127.0.0.1:65003", 0)
    assert fetch_backoff._pause_for(_Client("127.0.0.1:65003")) == 0.0


K = KafkaSettings(bootstrap_servers="b:9093", security_protocol="SASL_SSL",
                  sasl_mechanism="SCRAM-SHA-512", sasl_username="judge", sasl_password="pw")
CV = ssl.SSLCertVerificationError(1, "certificate verify failed")
CV.verify_code, CV.verify_message = 19, "self-signed certificate in certificate chain"
HOST = ssl.SSLCertVerificationError(1, "certificate verify failed")
HOST.verify_code, HOST.verify_message = 62, "Hostname mismatch"


@pytest.mark.parametrize(("exc", "words"), [
    (kerr.SaslAuthenticationFailed("bad"), "refused SASL SCRAM-SHA-512 login as 'judge'"),
    (kerr.UnsupportedSaslMechanismError("x. Enabled mechanisms are: ['PLAIN']"),
     "does not enable SASL SCRAM-SHA-512 (['PLAIN'] enabled)"),
    (CV, "not trusted (self-signed certificate in certificate chain): set "
     "JUDGEFLOW_KAFKA__SSL_CAFILE"),
    (HOST, "does not name the host 'b'"),
    (kerr.TopicAuthorizationFailedError({"t1", "t0"}), "access to topic(s) t0, t1"),
    (kerr.GroupAuthorizationFailedError("g"), "Read on consumer group g"),
    (kerr.ClusterAuthorizationFailedError(), "Write on no topic; grant Write on the topic(s)"),
])
def test_each_refusal_is_one_line_naming_its_cause(exc: BaseException, words: str) -> None:
    line = explain(exc, K)
    assert words in line and "\n" not in line and "pw" not in line.replace("password", "")
    assert is_fatal(exc)


def test_an_unreachable_broker_is_not_fatal_for_followers() -> None:
    assert not is_fatal(KafkaUnreachable("cannot reach Kafka"))
    assert not is_fatal(kerr.KafkaConnectionError())
    assert not is_fatal(kerr.NotLeaderForPartitionError())


#: Constructions only the factory may make (clients, and the work-arounds it applies), and
#: the modules allowed to make them.
CONSTRUCTIONS = re.compile(r"\b(AIOKafkaConsumer|AIOKafkaProducer|AIOKafkaAdminClient|"
                           r"AIOKafkaClient|faust\.App|install_idle_fetch_backoff|"
                           r"install_empty_assignment_rejoin|install_oauth_error_challenge|"
                           r"evict_dead_members|create_conn)\(")
ALLOWED = {"streams/kafka_clients.py", "streams/kafka_access.py", "streams/fetch_backoff.py",
           "streams/member_eviction.py",
           # each work-around's own unit test installs it
           "tests/unit/streams/test_group_join.py", "tests/unit/streams/test_oauthbearer.py",
           # the Apache Kafka test launcher's readiness probes and the test of the launcher
           # itself: raw aiokafka on purpose, independent of the code it is used to test
           "tools/kafka/probe.py", "tests/integration/test_apache_kafka.py"}


def test_no_kafka_client_is_made_outside_the_factory() -> None:
    found = []
    for package in ("schemas", "streams", "agents", "dashboard", "cli", "tools", "dev",
                    "tests"):
        for path in sorted((REPO / package).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel in ALLOWED or rel == "tests/unit/streams/test_kafka_clients.py":
                continue
            for n, line in enumerate(path.read_text().splitlines(), 1):
                code = line.split("#", 1)[0]
                defines = code.lstrip().startswith(("def ", "async def"))
                if CONSTRUCTIONS.search(code) and not defines:
                    found.append(f"{rel}:{n}: {line.strip()}")
    assert not found, "Kafka clients made outside streams/kafka_clients.py:\n" + "\n".join(found)


#: Every work-around of an upstream behaviour, by module -> whose behaviour its docstring's
#: first line names (docs/architecture.md lists them with when each applies).
WORK_AROUNDS = {
    "streams/fetch_backoff.py": "noida-db", "streams/member_eviction.py": "noida-db",
    "streams/group_join.py": "aiokafka", "streams/oauthbearer.py": "aiokafka",
    "streams/any_broker.py": "aiokafka", "streams/watchdogs.py": "Faust",
    "streams/detect/commit_guard.py": "Faust", "streams/detect/stall.py": "Faust",
    "streams/detect/partition_batches.py": "Faust",
}


@pytest.mark.parametrize(("module", "upstream"), sorted(WORK_AROUNDS.items()))
def test_each_work_around_says_first_which_upstream_behaviour_it_answers(
        module: str, upstream: str) -> None:
    first = (REPO / module).read_text().split("\n", 1)[0]
    assert first.startswith('"""') and upstream in first, first


def test_librdkafka_names_translate_a_working_config(ca: TestCA, client: CertPair) -> None:
    from streams.kafka_security import librdkafka_properties

    assert librdkafka_properties(scram(ca)) == {
        "bootstrap.servers": "127.0.0.1:9092", "security.protocol": "SASL_SSL",
        "sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": "alice", "sasl.password": "pw",
        "ssl.ca.location": str(ca.ca_file), "ssl.endpoint.identification.algorithm": "https"}
    mutual = KafkaSettings(security_protocol="SSL", ssl_cafile=ca.ca_file,
                           ssl_certfile=client.cert, ssl_keyfile=client.key,
                           ssl_check_hostname=False)
    props = librdkafka_properties(mutual)
    assert props["ssl.certificate.location"] == str(client.cert)
    assert props["ssl.key.location"] == str(client.key)
    assert props["ssl.endpoint.identification.algorithm"] == "none"
    assert librdkafka_properties(KafkaSettings()) == {
        "bootstrap.servers": "127.0.0.1:9092", "security.protocol": "PLAINTEXT"}


def test_oauthbearer_translates_to_librdkafka_with_its_gaps_said(ca: TestCA,
                                                                 tmp_path: Path) -> None:
    from streams.kafka_security import librdkafka_gaps, librdkafka_properties

    token = tmp_path / "token"
    token.write_text("eyJ.e30.sig\n")
    by_file = scram(ca, sasl_mechanism="OAUTHBEARER", sasl_username=None, sasl_password=None,
                    sasl_oauth_token_file=token)
    props = librdkafka_properties(by_file)
    assert props == {"bootstrap.servers": "127.0.0.1:9092", "security.protocol": "SASL_SSL",
                     "sasl.mechanisms": "OAUTHBEARER", "ssl.ca.location": str(ca.ca_file),
                     "ssl.endpoint.identification.algorithm": "https"}
    assert "eyJ" not in str(props)  # the token is no property: nothing half-translated
    (gap,) = librdkafka_gaps(by_file)
    assert gap.startswith("JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_FILE has no librdkafka property")
    assert f"reads {token} each call" in gap and "kcat: no equivalent" in gap
    assert "oauth_cb" in gap and "eyJ" not in gap
    by_hook = scram(ca, sasl_mechanism="OAUTHBEARER", sasl_username=None, sasl_password=None,
                    sasl_oauth_token_provider="json:dumps")
    assert librdkafka_properties(by_hook)["sasl.mechanisms"] == "OAUTHBEARER"
    (gap,) = librdkafka_gaps(by_hook)
    assert "SASL_OAUTH_TOKEN_PROVIDER=json:dumps is a Python hook" in gap
    assert librdkafka_gaps(scram(ca)) == [] and librdkafka_gaps(KafkaSettings()) == []

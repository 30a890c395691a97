"""judgeflow on Apache Kafka's OAUTHBEARER listener (the unsecured validator: an unsigned JWT's
``sub`` is the principal) and on its mutual-TLS listener: a good token works end to end from
a file, a plain hook and an async hook; a token the broker rejects, a token provider that
raises, a missing or foreign client certificate and a certificate that does not name the
host connected to each stop the command within seconds in one line naming that cause."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from agents.settings import Settings
from tests.helpers import collect, produce, settings_env, worker
from tests.helpers import test_settings as make_settings
from tests.kafka import apache_kafka_or_skip
from tools.broker import free_port
from tools.kafka import ApacheKafka
from tools.kafka.certs import TestCA
from tools.kafka.proxy import TcpProxy

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
FAIL_FAST_SECONDS = 15.0
SECRET = "client_secret=s3cr3t-idp-value"
#: the token a hook in this process returns (set by the fixture)
_token: dict[str, str] = {}

HOOKS = f'''
import os, time

def good():
    time.sleep(0.05)  # a blocking call, as to an identity provider
    return os.environ["TEST_OAUTH_TOKEN"]

async def good_async():
    return os.environ["TEST_OAUTH_TOKEN"]

def raising():
    raise RuntimeError("IdP unreachable ({SECRET})")
'''


@pytest.fixture(scope="module")
def kafka() -> Iterator[ApacheKafka]:
    with apache_kafka_or_skip(secure=True, oauth=True) as k:
        _token["admin"] = k.oauth_token(k.admin_user)  # the super user: no ACLs needed
        yield k


@pytest.fixture
def hooks(tmp_path: Path) -> Path:
    (tmp_path / "oauth_hooks.py").write_text(HOOKS)
    return tmp_path


def sync_token() -> str:
    return _token["admin"]


async def async_token() -> str:
    return _token["admin"]


def oauth_settings(k: ApacheKafka, tmp_path: Path, *, token: str | None = None,
                   hook: str | None = None) -> Settings:
    security: dict[str, Any] = {"bootstrap_servers": k.bootstrap_for("OAUTH"),
                                "security_protocol": "SASL_SSL",
                                "sasl_mechanism": "OAUTHBEARER", "ssl_cafile": k.ca_file}
    if hook is not None:
        security["sasl_oauth_token_provider"] = hook
    else:
        path = tmp_path / "token"
        path.write_text(f"{token}\n")  # as a projected token file ends
        security["sasl_oauth_token_file"] = path
    return make_settings(k.bootstrap, kafka=security)


def tls_settings(k: ApacheKafka, **security: Any) -> Settings:
    return make_settings(k.bootstrap, kafka={"bootstrap_servers": k.bootstrap_for("SSL"),
                                             "security_protocol": "SSL",
                                             "ssl_cafile": k.ca_file, **security})


def run_cli(s: Settings, *args: str, path: Path | None = None,
            token: str = "") -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**settings_env(s, reveal_secrets=True), "PATH": "/usr/bin:/bin",
           "PYTHONPATH": os.pathsep.join(str(p) for p in (REPO, path) if p),
           "TEST_OAUTH_TOKEN": token}
    began = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "cli.main", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    return proc, time.monotonic() - began


def one_line_error(proc: subprocess.CompletedProcess[str], elapsed: float) -> str:
    """Exit 1 within seconds, with exactly one line on stderr and no traceback."""
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("judgeflow: "), proc.stderr
    assert elapsed < FAIL_FAST_SECONDS, f"{elapsed:.1f}s"
    return lines[0]


@pytest.mark.parametrize("source", ["file", "hook", "async hook"])
def test_a_good_token_produces_and_consumes(kafka: ApacheKafka, tmp_path: Path,
                                            source: str) -> None:
    hook = {"hook": f"{__name__}:sync_token", "async hook": f"{__name__}:async_token"}
    s = oauth_settings(kafka, tmp_path, token=_token["admin"], hook=hook.get(source))
    topic = s.topics.judge_results
    asyncio.run(produce(s.kafka, topic, [(b"k", b'{"oauth": 1}')]))
    got = asyncio.run(collect(s.kafka, topic, until=1, timeout=30, quiet=0.1))
    assert [orjson.loads(r.value) for r in got] == [{"oauth": 1}]


@pytest.mark.parametrize("source", ["file", "oauth_hooks:good", "oauth_hooks:good_async"])
def test_kafka_check_passes_with_a_good_token(kafka: ApacheKafka, tmp_path: Path, hooks: Path,
                                              source: str) -> None:
    hook = None if source == "file" else source
    s = oauth_settings(kafka, tmp_path, token=_token["admin"], hook=hook)
    proc, _ = run_cli(s, "kafka", "check", path=hooks, token=_token["admin"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Authenticated" not in proc.stderr and "rejected" not in proc.stderr


def test_the_detector_runs_on_a_token_from_a_plain_hook(kafka: ApacheKafka, tmp_path: Path,
                                                        hooks: Path) -> None:
    """Faust's clients too: the detector (a Faust worker) authenticates with the token a
    blocking hook returns and dead-letters a malformed answer."""
    s = oauth_settings(kafka, tmp_path, hook="oauth_hooks:good")
    env = {"PYTHONPATH": os.pathsep.join([str(REPO), str(hooks)]),
           "TEST_OAUTH_TOKEN": _token["admin"]}
    with worker("detect", s, tmp_path, tag="oauth", extra_env=env) as w:
        asyncio.run(produce(kafka.bootstrap, s.topics.agent_answers, [(b"bad", b"{not json")]))
        got = asyncio.run(collect(kafka.bootstrap, s.topics.dlq(s.topics.agent_answers),
                                  until=1, timeout=90, quiet=0.1))
        assert got, w.log_text()[-3000:]
        assert w.alive and "Traceback" not in w.log_text(), w.log_text()[-3000:]


def test_a_rejected_token_stops_the_cli_and_a_worker_in_one_line(kafka: ApacheKafka,
                                                                 tmp_path: Path) -> None:
    s = oauth_settings(kafka, tmp_path, token="garbage")
    want = ("rejected the OAUTHBEARER token (invalid_token): check "
            "JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_FILE")
    for args in (("kafka", "check"), ("tail", s.topics.calibration, "--max", "1"),
                 ("dashboard", "--port", "0")):
        line = one_line_error(*run_cli(s, *args))
        assert want in line and "does not exist" not in line, line
    began = time.monotonic()
    with worker("judge", s, tmp_path, tag="garbage") as w:
        code = w.proc.wait(timeout=60)
        log = w.log_text()
    lines = [ln for ln in log.splitlines() if ln.startswith("judgeflow:")]
    assert code != 0 and len(lines) == 1 and "Traceback" not in log, log[-3000:]
    assert want in lines[0] and "NodeNotReady" not in log, lines[0]
    assert time.monotonic() - began < FAIL_FAST_SECONDS


def test_a_raising_token_provider_is_one_line_without_its_text(kafka: ApacheKafka,
                                                               tmp_path: Path,
                                                               hooks: Path) -> None:
    s = oauth_settings(kafka, tmp_path, hook="oauth_hooks:raising")
    for args in (("kafka", "check"), ("tail", s.topics.calibration, "--max", "1")):
        proc, elapsed = run_cli(s, *args, path=hooks)
        line = one_line_error(proc, elapsed)
        assert line == ("judgeflow: the OAUTHBEARER token provider JUDGEFLOW_KAFKA__SASL_OAUTH_"
                        "TOKEN_PROVIDER=oauth_hooks:raising failed: RuntimeError"), line
        assert "s3cr3t" not in proc.stderr + proc.stdout


def test_mutual_tls_without_or_with_a_foreign_certificate(kafka: ApacheKafka,
                                                          tmp_path: Path) -> None:
    proc, elapsed = run_cli(tls_settings(kafka), "kafka", "check")
    line = one_line_error(proc, elapsed)
    assert "requires a client certificate" in line and "SSL_CERTFILE" in line, line
    assert "BOOTSTRAP_SERVERS" not in line
    foreign = TestCA(tmp_path / "other-ca").issue("mallory")  # a CA the broker does not trust
    s = tls_settings(kafka, ssl_certfile=foreign.cert, ssl_keyfile=foreign.key)
    proc, elapsed = run_cli(s, "tail", s.topics.calibration, "--max", "1")
    line = one_line_error(proc, elapsed)
    assert "rejected the client certificate" in line and "_SSL_CERTFILE/_SSL_KEYFILE" in line
    assert "BOOTSTRAP_SERVERS" not in line


def test_a_certificate_that_does_not_name_the_host(kafka: ApacheKafka) -> None:
    """The brokers' certificate names 127.0.0.1 and localhost; 127.0.0.2 reaches them
    through a forwarder."""
    port = free_port()
    target = int(kafka.bootstrap_for("SSL").split(",")[0].rpartition(":")[2])
    proxy = TcpProxy(port, target, host="127.0.0.2", target_host="127.0.0.1")
    try:
        proxy.restore()
        cert = kafka.client_cert("alice")
        s = tls_settings(kafka, bootstrap_servers=f"127.0.0.2:{port}", ssl_certfile=cert.cert,
                         ssl_keyfile=cert.key)
        proc, elapsed = run_cli(s, "kafka", "check")
    finally:
        proxy.close()
    line = one_line_error(proc, elapsed)
    assert "does not name the host '127.0.0.2'" in line, line
    assert "JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS" in line and "SSL_CAFILE" not in line, line

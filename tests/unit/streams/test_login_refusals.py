"""The one line for a refused TLS handshake or OAUTHBEARER login (streams.kafka_access's
error map): each names its real cause and the setting that fixes it, never a wrong one."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import pytest
from aiokafka import errors as kerr

from streams.kafka_access import _refused_certificate, explain, is_fatal
from streams.kafka_settings import KafkaSettings

WHERE = "127.0.0.2:9093"
TLS = KafkaSettings(bootstrap_servers=WHERE, security_protocol="SSL")
# (copies: the files need not exist for the wording)
MTLS = TLS.model_copy(update={"ssl_certfile": Path("/c.pem"), "ssl_keyfile": Path("/k.pem")})
OAUTH_HOOK = KafkaSettings(bootstrap_servers=WHERE, security_protocol="SASL_SSL",
                           sasl_mechanism="OAUTHBEARER",
                           sasl_oauth_token_provider="idp.tokens:fetch")
OAUTH_FILE = OAUTH_HOOK.model_copy(update={"sasl_oauth_token_provider": None,
                                           "sasl_oauth_token_file": Path("/var/run/token")})


def verify_error(code: int, message: str) -> ssl.SSLCertVerificationError:
    exc = ssl.SSLCertVerificationError(1, "certificate verify failed")
    exc.verify_code, exc.verify_message = code, message
    return exc


def alert(reason: str) -> ssl.SSLError:
    exc = ssl.SSLError(1, f"[SSL: {reason}] alert (_ssl.c:2580)")
    exc.reason = reason  # type: ignore[misc]
    return exc


IP_MISMATCH = verify_error(64, "IP address mismatch, certificate is not valid for '127.0.0.2'.")

# (error, settings, words the line has, words it must not have)
CASES: list[tuple[BaseException, KafkaSettings, list[str], list[str]]] = [
    (IP_MISMATCH, TLS,
     ["does not name the host '127.0.0.2'", "IP address mismatch",
      "JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS", "is on by default: keep it on"],
     ["SSL_CAFILE", "not trusted", "=false"]),
    (verify_error(62, "Hostname mismatch, certificate is not valid for 'kafka-0'."), TLS,
     ["does not name the host '127.0.0.2'", "Hostname mismatch"], ["SSL_CAFILE"]),
    (verify_error(19, "self-signed certificate in certificate chain"), TLS,
     ["is not trusted", "JUDGEFLOW_KAFKA__SSL_CAFILE"], ["does not name"]),
    # Kafka's answer to a TLS client without a certificate on a client-auth listener
    (alert("SSLV3_ALERT_BAD_CERTIFICATE"), TLS,
     ["requires a client certificate", "JUDGEFLOW_KAFKA__SSL_CERTFILE",
      "JUDGEFLOW_KAFKA__SSL_KEYFILE"], ["BOOTSTRAP_SERVERS", "another protocol"]),
    (alert("TLSV13_ALERT_CERTIFICATE_REQUIRED"), TLS,
     ["requires a client certificate", "'certificate required'"], ["BOOTSTRAP_SERVERS"]),
    # ... and to a certificate from a CA it does not trust
    (alert("SSLV3_ALERT_CERTIFICATE_UNKNOWN"), MTLS,
     ["rejected the client certificate", "'certificate unknown'", "_SSL_CERTFILE/_SSL_KEYFILE"],
     ["BOOTSTRAP_SERVERS", "requires"]),
    (alert("TLSV1_ALERT_UNKNOWN_CA"), MTLS, ["rejected the client certificate", "unknown CA"],
     []),
    (alert("WRONG_VERSION_NUMBER"), TLS, ["TLS handshake", "failed"], ["rejected"]),
    (kerr.SaslAuthenticationFailed('{"status":"invalid_token"}'), OAUTH_FILE,
     ["rejected the OAUTHBEARER token (invalid_token)",
      "check JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_FILE"], ["/var/run", "PROVIDER"]),
    (kerr.SaslAuthenticationFailed('{"status":"insufficient_scope","scope":"kafka"}'),
     OAUTH_HOOK,
     ["rejected the OAUTHBEARER token (insufficient_scope)",
      "JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_PROVIDER=idp.tokens:fetch"], ["TOKEN_FILE"]),
    (kerr.SaslAuthenticationFailed("Authentication failed"), OAUTH_FILE,
     ["rejected the OAUTHBEARER token (no reason given)"], []),
]


@pytest.mark.parametrize(("exc", "k", "has", "lacks"), CASES)
def test_the_line_names_the_cause_and_its_setting(exc: BaseException, k: KafkaSettings,
                                                  has: list[str], lacks: list[str]) -> None:
    line = explain(exc, k, WHERE)
    assert "\n" not in line and f"at {WHERE}" in line, line
    for words in has:
        assert words in line, (words, line)
    for words in lacks:
        assert words not in line, (words, line)


def closed_by(cause: BaseException) -> kerr.KafkaConnectionError:
    """What aiokafka raises when the broker's TLS alert closes the connection (TLS 1.3: our
    side of the handshake completed, the alert comes with the first read)."""
    exc = kerr.KafkaConnectionError(f"Connection at {WHERE} closed")
    exc.__cause__ = cause
    return exc


@pytest.mark.parametrize(("exc", "refused"), [
    (closed_by(alert("SSLV3_ALERT_BAD_CERTIFICATE")), True),
    (closed_by(alert("SSLV3_ALERT_CERTIFICATE_UNKNOWN")), True),
    (alert("TLSV1_ALERT_UNKNOWN_CA"), True),  # TLS 1.2: during the handshake
    (closed_by(ConnectionResetError()), False),  # a plaintext listener, a dead broker
    (closed_by(alert("WRONG_VERSION_NUMBER")), False),
    (kerr.KafkaConnectionError("closed"), False),
])
def test_a_refused_client_certificate_is_a_refusal_not_an_unreachable_broker(
        exc: BaseException, refused: bool) -> None:
    assert (_refused_certificate(exc) is not None) is refused


@pytest.mark.parametrize("exc", [IP_MISMATCH, kerr.SaslAuthenticationFailed("x")])
def test_these_refusals_are_never_retried(exc: Any) -> None:
    assert is_fatal(exc)

"""Failing fast on Kafka access: a wrong password, an untrusted certificate or a missing ACL
ends the command within seconds in ONE line naming the cause, never a hang or silent retries.

aiokafka hides the cause of a failed connection (it logs "Unable connect" and retries, then
reports only "Unable to bootstrap"), so :func:`probe` opens one raw connection with the same
security settings first and maps what went wrong (:func:`explain`). The errors in
:data:`FATAL` are never retried by any worker loop: they need an operator, not time.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from dataclasses import dataclass
from typing import Any

from aiokafka import errors as kerr
from aiokafka.conn import collect_hosts, create_conn
from aiokafka.protocol.metadata import MetadataRequest

from streams.errors import StreamsError
from streams.kafka_security import TokenProviderError, aiokafka_auth
from streams.kafka_settings import KafkaSettings, sasl_username
from streams.oauthbearer import challenge_status

#: Failures that retrying cannot fix.
FATAL: tuple[type[BaseException], ...] = (
    kerr.SaslAuthenticationFailed, kerr.UnsupportedSaslMechanismError,
    kerr.AuthenticationFailedError, kerr.TopicAuthorizationFailedError,
    kerr.GroupAuthorizationFailedError, kerr.ClusterAuthorizationFailedError,
    kerr.TransactionalIdAuthorizationFailed, kerr.IllegalSaslStateError,
    ssl.SSLCertVerificationError)


class KafkaAccessError(StreamsError):
    """Kafka refused us for a reason an operator must fix; the message is the one line."""


class KafkaUnreachable(KafkaAccessError):
    """No bootstrap server answered (it may come up later: a follower may wait for it)."""


@dataclass(frozen=True)
class ClusterInfo:
    bootstrap: str  # the host:port that answered
    cluster_id: str | None
    api_versions: dict[int, tuple[int, int]]


def is_fatal(exc: BaseException) -> bool:
    """Whether no retry can fix ``exc`` (an unreachable broker may come back)."""
    return isinstance(exc, (*FATAL, KafkaAccessError)) and not isinstance(exc, KafkaUnreachable)


def _names(arg: Any) -> str:
    if isinstance(arg, set | frozenset | list | tuple):
        return ", ".join(sorted(map(str, arg)))
    return str(arg)


def explain(exc: BaseException, k: KafkaSettings, where: str | None = None) -> str:
    """One line naming the cause of ``exc`` and the setting or ACL that fixes it."""
    at = f" at {where}" if where else f" at {k.bootstrap_servers}"
    arg = _names(exc.args[0]) if exc.args else ""
    if isinstance(exc, kerr.SaslAuthenticationFailed | kerr.AuthenticationFailedError):
        if k.sasl_mechanism == "OAUTHBEARER":
            return _token_rejected(str(exc), k, at)
        return (f"Kafka{at} refused SASL {k.sasl_mechanism} login as '{sasl_username(k)}': "
                "wrong username or password (JUDGEFLOW_KAFKA__SASL_USERNAME/_PASSWORD)")
    if isinstance(exc, kerr.UnsupportedSaslMechanismError):
        return (f"Kafka{at} does not enable SASL {k.sasl_mechanism} "
                f"({str(exc).split('Enabled mechanisms are:')[-1].strip()} enabled): set "
                "JUDGEFLOW_KAFKA__SASL_MECHANISM")
    if isinstance(exc, ssl.SSLCertVerificationError):
        if exc.verify_code in HOST_MISMATCH:
            host = (where or k.bootstrap_servers.split(",")[0]).rpartition(":")[0]
            return (f"TLS: the certificate of the broker{at} does not name the host '{host}' "
                    f"({exc.verify_message}): put a host name or address the certificate "
                    "carries in JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS (hostname verification, "
                    "JUDGEFLOW_KAFKA__SSL_CHECK_HOSTNAME, is on by default: keep it on)")
        return (f"TLS: the certificate of the broker{at} is not trusted "
                f"({exc.verify_message}): set JUDGEFLOW_KAFKA__SSL_CAFILE to the CA that "
                "signed it")
    if isinstance(exc, ssl.SSLError) and exc.reason in CLIENT_CERT_ALERTS:
        return _client_cert_refused(exc.reason, k, at)
    if isinstance(exc, ssl.SSLError):
        return (f"TLS handshake with the broker{at} failed ({exc.reason or exc}): does the "
                "listener want a client certificate (JUDGEFLOW_KAFKA__SSL_CERTFILE/_KEYFILE) "
                "or no TLS (JUDGEFLOW_KAFKA__SECURITY_PROTOCOL)?")
    if isinstance(exc, kerr.TopicAuthorizationFailedError):
        return (f"Kafka{at} denies this principal access to topic(s) {arg or '(unnamed)'}: "
                "grant the ACLs `judgeflow kafka check` lists as missing")
    if isinstance(exc, kerr.GroupAuthorizationFailedError):
        return (f"Kafka{at} denies this principal Read on consumer group {arg or '(unnamed)'}:"
                " grant the ACLs `judgeflow kafka check` lists as missing")
    if isinstance(exc, kerr.ClusterAuthorizationFailedError):
        # in practice InitProducerId of an idempotent producer: since Kafka 3.0 (KIP-679)
        # Write on any topic grants IdempotentWrite, so the principal may write no topic
        return (f"Kafka{at} refused this principal a producer id (IdempotentWrite): it has "
                "Write on no topic; grant Write on the topic(s) it sends to (`judgeflow kafka "
                "check` lists them)")
    if isinstance(exc, kerr.TransactionalIdAuthorizationFailed):
        return f"Kafka{at} denies this principal its transactional id {arg}"
    return f"Kafka error{at}: {type(exc).__name__}: {exc}"


#: OpenSSL's verify codes for a certificate that does not name the host connected to:
#: X509_V_ERR_HOSTNAME_MISMATCH, _EMAIL_MISMATCH, _IP_ADDRESS_MISMATCH
HOST_MISMATCH = (62, 63, 64)
#: TLS alerts a broker sends when it refuses our client certificate or has none (Kafka's JSSE
#: sends bad_certificate for none and certificate_unknown for one from another CA; OpenSSL
#: servers certificate_required and unknown_ca). With TLS 1.3 they arrive after the handshake
#: completed on our side, as the cause of aiokafka's "connection closed".
CLIENT_CERT_ALERTS = {
    "SSLV3_ALERT_BAD_CERTIFICATE": "bad certificate",
    "SSLV3_ALERT_CERTIFICATE_UNKNOWN": "certificate unknown",
    "SSLV3_ALERT_CERTIFICATE_EXPIRED": "certificate expired",
    "SSLV3_ALERT_CERTIFICATE_REVOKED": "certificate revoked",
    "SSLV3_ALERT_UNSUPPORTED_CERTIFICATE": "unsupported certificate",
    "TLSV1_ALERT_UNKNOWN_CA": "unknown CA",
    "TLSV1_ALERT_ACCESS_DENIED": "access denied",
    "TLSV13_ALERT_CERTIFICATE_REQUIRED": "certificate required",
}


def _token_rejected(error: str, k: KafkaSettings, at: str) -> str:
    status = challenge_status(error) or "no reason given"
    source = ("JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_FILE" if k.sasl_oauth_token_file is not None
              else f"the token provider JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_PROVIDER="
                   f"{k.sasl_oauth_token_provider}")
    return (f"Kafka{at} rejected the OAUTHBEARER token ({status}): check {source} (an "
            "expired token, another issuer or audience than the broker's?)")


def _client_cert_refused(reason: str, k: KafkaSettings, at: str) -> str:
    alert = CLIENT_CERT_ALERTS[reason]
    if k.ssl_certfile is None:
        return (f"TLS: the broker{at} requires a client certificate (mutual TLS; it answered "
                f"'{alert}'): set JUDGEFLOW_KAFKA__SSL_CERTFILE and JUDGEFLOW_KAFKA__SSL_KEYFILE")
    return (f"TLS: the broker{at} rejected the client certificate ('{alert}'): it must be "
            "signed by a CA the broker trusts and be valid; check "
            "JUDGEFLOW_KAFKA__SSL_CERTFILE/_SSL_KEYFILE")


async def _open(k: KafkaSettings, host: str, port: int) -> Any:
    auth = aiokafka_auth(k)
    timeout = k.connect_timeout_seconds
    return await asyncio.wait_for(
        create_conn(host, port, client_id="judgeflow-probe",
                    request_timeout_ms=int(timeout * 1000), **auth), timeout)


async def probe(k: KafkaSettings) -> ClusterInfo:
    """Connect to the first bootstrap server that answers, as every client will (TLS, SASL),
    and read the cluster id. Raises :class:`KafkaAccessError` with the cause in one line."""
    unreachable: list[str] = []
    for host, port, _ in collect_hosts(k.bootstrap_servers):
        where = f"{host}:{port}"
        try:
            conn = await _open(k, host, port)
        except TokenProviderError as exc:  # no token to send: retrying now will not give one
            raise KafkaAccessError(str(exc)) from None
        except FATAL as exc:
            raise KafkaAccessError(explain(exc, k, where)) from None
        except ssl.SSLError as exc:
            raise KafkaAccessError(explain(exc, k, where)) from None
        except TimeoutError:
            unreachable.append(f"{where}: no Kafka answer within {k.connect_timeout_seconds:g}s "
                               f"({k.security_protocol}: is that the listener's protocol?)")
            continue
        except (OSError, kerr.KafkaError) as exc:
            refused = _refused_certificate(exc)
            if refused is not None:
                raise KafkaAccessError(explain(refused, k, where)) from None
            unreachable.append(f"{where}: {_closed_reason(exc, k)}")
            continue
        try:
            meta = await asyncio.wait_for(conn.send(MetadataRequest([], False)),
                                          k.connect_timeout_seconds)
            versions = dict(conn._versions)
        except FATAL as exc:
            raise KafkaAccessError(explain(exc, k, where)) from None
        except (OSError, TimeoutError, kerr.KafkaError) as exc:
            unreachable.append(f"{where}: {_closed_reason(exc, k)}")
            continue
        finally:
            with contextlib.suppress(Exception):
                conn.close()
        return ClusterInfo(where, getattr(meta, "cluster_id", None), versions)
    raise KafkaUnreachable(f"cannot reach Kafka at {k.bootstrap_servers} ("
                           + "; ".join(unreachable) + "): set JUDGEFLOW_KAFKA__BOOTSTRAP_SERVERS "
                           "or --bootstrap-servers")


def _refused_certificate(exc: BaseException) -> ssl.SSLError | None:
    """The TLS alert behind aiokafka's "connection closed" when the broker refused our client
    certificate (or wanted one): a refusal, not an unreachable broker."""
    cause = exc.__cause__ if isinstance(exc, kerr.KafkaConnectionError) else exc
    if isinstance(cause, ssl.SSLError) and cause.reason in CLIENT_CERT_ALERTS:
        return cause
    return None


def _closed_reason(exc: BaseException, k: KafkaSettings) -> str:
    if isinstance(exc, ConnectionRefusedError) or "Connect call failed" in str(exc):
        return "connection refused"
    if isinstance(exc, OSError) and not isinstance(exc, ConnectionError):
        return f"{type(exc).__name__}: {exc.strerror or exc}"
    cert = (" or want a client certificate (JUDGEFLOW_KAFKA__SSL_CERTFILE/_KEYFILE)"
            if k.uses_tls and k.ssl_certfile is None else "")
    return (f"the broker closed the connection ({type(exc).__name__}): does its listener "
            f"speak another protocol than {k.security_protocol} "
            f"(JUDGEFLOW_KAFKA__SECURITY_PROTOCOL){cert}?")

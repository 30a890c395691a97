"""Kafka connection settings (``JUDGEFLOW_KAFKA__*``): brokers, security, embedded-broker quirks.

Every Kafka client judgeflow makes is built from these by :mod:`streams.kafka_clients`. The
security settings follow aiokafka's names; docs/configuration.md gives the librdkafka names
next to them (``security.protocol``, ``sasl.mechanisms``, ``ssl.ca.location`` ...). A
mis-combination is a one-line error at start (e.g. a SASL mechanism over SSL without SASL),
never a client that silently talks PLAINTEXT.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from streams.settings_rules import SettingsModel, bootstrap_problem, refused

SecurityProtocol = Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
SaslMechanism = Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]
BrokerKind = Literal["auto", "embedded", "kafka"]

ENV = "JUDGEFLOW_KAFKA__"


def _env(field: str) -> str:
    return ENV + field.upper()


class KafkaSettings(SettingsModel):
    #: ``host:port`` entries, comma-separated; IPv6 in brackets (``[::1]:9092``).
    bootstrap_servers: str = "127.0.0.1:9092"
    #: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (librdkafka ``security.protocol``).
    security_protocol: SecurityProtocol = "PLAINTEXT"
    #: Required with SASL_*: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER.
    sasl_mechanism: SaslMechanism | None = None
    sasl_username: str | None = None
    #: Never logged nor printed (``judgeflow config`` shows it as hidden).
    sasl_password: SecretStr | None = None
    #: Mounted secrets (Kubernetes): the value is the file's content, trailing newline cut.
    sasl_username_file: Path | None = None
    sasl_password_file: Path | None = None
    #: OAUTHBEARER: a file holding the token, re-read at every (re)authentication, as a
    #: Kubernetes projected service-account token is rotated in place.
    sasl_oauth_token_file: Path | None = None
    #: OAUTHBEARER: ``package.module:callable`` returning the token (str or awaitable str),
    #: e.g. a cloud provider's signer (MSK IAM).
    sasl_oauth_token_provider: str | None = None
    #: A private CA (PEM) the broker certificates are checked against; unset = system CAs.
    ssl_cafile: Path | None = None
    #: Mutual TLS: this client's certificate (PEM; may hold the key too) and its key.
    ssl_certfile: Path | None = None
    ssl_keyfile: Path | None = None
    #: An encrypted client key's password (librdkafka ``ssl.key.password``), or a mounted
    #: file holding it; hidden like the SASL password.
    ssl_key_password: SecretStr | None = None
    ssl_key_password_file: Path | None = None
    #: Check that the broker certificate names the host connected to. Off only for a
    #: broker reached by an address its certificate does not name; the CA is still checked.
    ssl_check_hostname: bool = True
    #: Seconds a connection attempt (TCP, TLS, SASL) may take before the command fails.
    connect_timeout_seconds: float = Field(default=10.0, gt=0)
    #: ``auto``: recognise the embedded broker (noida-db) by what it answers and apply its
    #: work-arounds only to it; ``embedded``/``kafka`` say so without asking.
    broker: BrokerKind = "auto"
    #: Embedded broker only: pause after an empty fetch, in ms (it ignores Fetch max-wait).
    #: Applied only to clients of a broker recognised as embedded; 0 = off.
    idle_fetch_backoff_ms: int = Field(default=50, ge=0, le=5000)
    #: Partitions for topics judgeflow creates itself (inputs, outputs, DLQs, internal).
    partitions: int = Field(default=4, ge=1)
    replication_factor: int = Field(default=1, ge=1)
    #: Consumer-group liveness: a worker killed without leaving is replaced after this long.
    session_timeout_seconds: float = Field(default=10.0, gt=0)
    heartbeat_interval_seconds: float = Field(default=2.0, gt=0)
    commit_interval_seconds: float = Field(default=1.0, gt=0)
    #: Embedded broker only: before joining a group, evict members whose process on this
    #: host is dead (noida-db never expires them). Never applied to any other broker.
    evict_dead_members: bool = True
    #: Producer batching delay: larger batches, fewer requests, a little more latency.
    producer_linger_ms: int = Field(default=20, ge=0, le=1000)

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol.startswith("SASL_")

    @property
    def uses_tls(self) -> bool:
        return self.security_protocol in ("SSL", "SASL_SSL")

    @field_validator("bootstrap_servers")
    @classmethod
    def _addresses(cls, value: str) -> str:
        return refused(value, bootstrap_problem(value))

    @model_validator(mode="after")
    def _consistent(self) -> KafkaSettings:
        problem = security_problem(self)
        if problem:
            raise ValueError(problem)
        return self


def _paths(k: KafkaSettings) -> dict[str, Path | None]:
    return {"sasl_username_file": k.sasl_username_file,
            "sasl_password_file": k.sasl_password_file,
            "sasl_oauth_token_file": k.sasl_oauth_token_file, "ssl_cafile": k.ssl_cafile,
            "ssl_certfile": k.ssl_certfile, "ssl_keyfile": k.ssl_keyfile,
            "ssl_key_password_file": k.ssl_key_password_file}


def security_problem(k: KafkaSettings) -> str | None:
    """The first inconsistency of the security settings in one line, or None."""
    proto = f"{_env('security_protocol')}={k.security_protocol}"
    if k.sasl_mechanism and not k.uses_sasl:
        return (f"{_env('sasl_mechanism')}={k.sasl_mechanism} needs "
                f"{_env('security_protocol')} SASL_SSL or SASL_PLAINTEXT, not {proto}")
    if k.uses_sasl and not k.sasl_mechanism:
        return f"{proto} needs {_env('sasl_mechanism')} (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 " \
               "or OAUTHBEARER)"
    for name in ("username", "password"):
        if getattr(k, f"sasl_{name}") is not None and getattr(k, f"sasl_{name}_file"):
            return f"set {_env('sasl_' + name)} or {_env('sasl_' + name + '_file')}, not both"
    sasl_fields = (k.sasl_username, k.sasl_password, k.sasl_username_file,
                   k.sasl_password_file, k.sasl_oauth_token_file, k.sasl_oauth_token_provider)
    if not k.uses_sasl and any(v is not None for v in sasl_fields):
        return f"SASL credentials are set but {proto} does not use SASL (SASL_SSL?)"
    if k.sasl_mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
        for name in ("username", "password"):
            if getattr(k, f"sasl_{name}") is None and not getattr(k, f"sasl_{name}_file"):
                return (f"{_env('sasl_mechanism')}={k.sasl_mechanism} needs "
                        f"{_env('sasl_' + name)} or {_env('sasl_' + name + '_file')}")
    if k.sasl_mechanism == "OAUTHBEARER":
        given = [k.sasl_oauth_token_file is not None, k.sasl_oauth_token_provider is not None]
        if sum(given) != 1:
            return (f"{_env('sasl_mechanism')}=OAUTHBEARER needs exactly one of "
                    f"{_env('sasl_oauth_token_file')} and {_env('sasl_oauth_token_provider')}")
        spec = k.sasl_oauth_token_provider
        if spec is not None and (spec.count(":") != 1 or not all(spec.split(":"))):
            return f"{_env('sasl_oauth_token_provider')} must read package.module:callable"
    elif k.sasl_username is not None and k.sasl_mechanism is None:
        return f"{_env('sasl_username')} is set without {_env('sasl_mechanism')}"
    if k.ssl_key_password is not None and k.ssl_key_password_file is not None:
        return f"set {_env('ssl_key_password')} or {_env('ssl_key_password_file')}, not both"
    tls_fields = (k.ssl_cafile, k.ssl_certfile, k.ssl_keyfile, k.ssl_key_password,
                  k.ssl_key_password_file)
    if not k.uses_tls and any(v is not None for v in tls_fields):
        return f"TLS files are set but {proto} does not use TLS (SSL or SASL_SSL?)"
    if k.ssl_keyfile is not None and k.ssl_certfile is None:
        return f"{_env('ssl_keyfile')} is set without {_env('ssl_certfile')} (mutual TLS " \
               "needs the client certificate)"
    if (k.ssl_key_password is not None or k.ssl_key_password_file) and k.ssl_certfile is None:
        return f"{_env('ssl_key_password')} is set without {_env('ssl_certfile')} (the " \
               "password decrypts the mutual-TLS client key)"
    for field, path in _paths(k).items():
        problem = _file_problem(field, path)
        if problem:
            return problem
    if k.sasl_password is not None and not k.sasl_password.get_secret_value():
        return f"{_env('sasl_password')} is empty"
    return None


#: Files whose content is a secret (or a credential): an empty one is refused at start, and
#: the path is never echoed (a value pasted into the variable by mistake is the secret).
SECRET_FILES = ("sasl_username_file", "sasl_password_file", "sasl_oauth_token_file",
                "ssl_key_password_file")


def _file_problem(field: str, path: Path | None) -> str | None:
    if path is None:
        return None
    secret = field in SECRET_FILES
    where = "the path given" if secret else str(path)
    if not path.is_file():
        return f"{_env(field)}: no readable file at {where}"
    if not secret:
        return None
    try:
        value = read_secret_file(path)
    except (OSError, UnicodeDecodeError):
        return f"{_env(field)}: no readable file at {where}"
    if not value.strip():
        return f"{_env(field)}: the file is empty (a secret not mounted yet?)"
    return None


def read_secret_file(path: Path) -> str:
    """A mounted secret's value: the file's text without its trailing newline."""
    return path.read_text(encoding="utf-8").rstrip("\r\n")


def sasl_username(k: KafkaSettings) -> str | None:
    if k.sasl_username_file is not None:
        return read_secret_file(k.sasl_username_file)
    return k.sasl_username


def sasl_password(k: KafkaSettings) -> str | None:
    """The password, from the setting or its mounted file (read when a client is built)."""
    if k.sasl_password_file is not None:
        return read_secret_file(k.sasl_password_file)
    return k.sasl_password.get_secret_value() if k.sasl_password is not None else None


def ssl_key_password(k: KafkaSettings) -> str | None:
    """The client key's password, from the setting or its mounted file (read when a client
    is built)."""
    if k.ssl_key_password_file is not None:
        return read_secret_file(k.ssl_key_password_file)
    return k.ssl_key_password.get_secret_value() if k.ssl_key_password is not None else None

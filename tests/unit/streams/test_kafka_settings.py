"""The Kafka security settings: every mis-combination is one line naming the variable to fix;
mounted secrets are read from their files; secrets never show in ``judgeflow config``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from schemas.errors import describe
from streams.kafka_settings import KafkaSettings, sasl_password, sasl_username
from streams.settings import Settings
from streams.settings_env import HIDDEN, settings_env

SCRAM = {"security_protocol": "SASL_SSL", "sasl_mechanism": "SCRAM-SHA-512",
         "sasl_username": "judge", "sasl_password": "pw"}


@pytest.fixture()
def pem(tmp_path: Path) -> Path:
    path = tmp_path / "ca.pem"
    path.write_text("not checked by the settings, only by the TLS context\n")
    return path


BAD: list[tuple[dict[str, Any], str]] = [
    ({"sasl_mechanism": "PLAIN"}, "SASL_MECHANISM=PLAIN needs JUDGEFLOW_KAFKA__SECURITY_PROTOCOL"),
    ({"security_protocol": "SASL_SSL"}, "needs JUDGEFLOW_KAFKA__SASL_MECHANISM"),
    ({**SCRAM, "sasl_password": None}, "needs JUDGEFLOW_KAFKA__SASL_PASSWORD or "
     "JUDGEFLOW_KAFKA__SASL_PASSWORD_FILE"),
    ({**SCRAM, "sasl_username": None}, "JUDGEFLOW_KAFKA__SASL_USERNAME"),
    ({"sasl_username": "x", "sasl_password": "y"}, "does not use SASL"),
    ({"security_protocol": "SASL_SSL", "sasl_mechanism": "OAUTHBEARER"},
     "exactly one of JUDGEFLOW_KAFKA__SASL_OAUTH_TOKEN_FILE"),
    ({"security_protocol": "SASL_SSL", "sasl_mechanism": "OAUTHBEARER",
      "sasl_oauth_token_provider": "no-colon"}, "package.module:callable"),
    ({"ssl_cafile": "/etc/hostname"}, "does not use TLS"),
    ({"security_protocol": "SSL", "ssl_cafile": "/no/such/ca.pem"},
     "JUDGEFLOW_KAFKA__SSL_CAFILE: no readable file at /no/such/ca.pem"),
    ({"security_protocol": "SSL", "ssl_keyfile": "/etc/hostname"}, "without "
     "JUDGEFLOW_KAFKA__SSL_CERTFILE"),
    ({**SCRAM, "sasl_password_file": "/etc/hostname"}, "not both"),
    ({"security_protocol": "SSL", "ssl_certfile": "/etc/hostname", "ssl_key_password": "k",
      "ssl_key_password_file": "/etc/hostname"}, "set JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD or "
     "JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD_FILE, not both"),
    ({"security_protocol": "SSL", "ssl_key_password": "k"}, "SSL_KEY_PASSWORD is set without "
     "JUDGEFLOW_KAFKA__SSL_CERTFILE"),
    ({"ssl_key_password_file": "/etc/hostname"}, "does not use TLS"),
    ({"security_protocol": "SSL", "ssl_certfile": "/etc/hostname",
      "ssl_key_password_file": "/run/secrets/nope"},
     "JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD_FILE: no readable file at the path given"),
    ({"security_protocol": "TLS"}, "security_protocol"),
    ({"security_protocol": "SASL_SSL", "sasl_mechanism": "GSSAPI"}, "sasl_mechanism"),
]


@pytest.mark.parametrize(("fields", "message"), BAD)
def test_a_bad_combination_is_one_line_naming_the_variable(fields: dict[str, Any],
                                                           message: str) -> None:
    with pytest.raises(ValidationError) as err:
        Settings(kafka=fields)
    text = describe(err.value)
    assert message in text and "\n" not in text


GOOD: list[dict[str, Any]] = [
    {},
    {"security_protocol": "SSL"},
    {"security_protocol": "SASL_PLAINTEXT", "sasl_mechanism": "PLAIN", "sasl_username": "u",
     "sasl_password": "p"},
    SCRAM,
    {**SCRAM, "sasl_mechanism": "SCRAM-SHA-256"},
    {"security_protocol": "SASL_SSL", "sasl_mechanism": "OAUTHBEARER",
     "sasl_oauth_token_provider": "mypkg.tokens:fetch"},
]


@pytest.mark.parametrize("fields", GOOD)
def test_good_combinations_are_accepted(fields: dict[str, Any]) -> None:
    Settings(kafka=fields)


def test_mutual_tls_files_must_exist(pem: Path) -> None:
    k = KafkaSettings(security_protocol="SSL", ssl_cafile=pem, ssl_certfile=pem, ssl_keyfile=pem)
    assert k.uses_tls and not k.uses_sasl
    assert k.ssl_check_hostname  # on unless turned off


def test_mounted_secrets_are_read_from_their_files(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "user").write_text("judge\n")
    (tmp_path / "password").write_text("s3cret\n")
    monkeypatch.setenv("JUDGEFLOW_KAFKA__SECURITY_PROTOCOL", "SASL_SSL")
    monkeypatch.setenv("JUDGEFLOW_KAFKA__SASL_MECHANISM", "SCRAM-SHA-512")
    monkeypatch.setenv("JUDGEFLOW_KAFKA__SASL_USERNAME_FILE", str(tmp_path / "user"))
    monkeypatch.setenv("JUDGEFLOW_KAFKA__SASL_PASSWORD_FILE", str(tmp_path / "password"))
    k = Settings().kafka
    assert (sasl_username(k), sasl_password(k)) == ("judge", "s3cret")
    (tmp_path / "password").write_text("rotated")  # read again for the next client
    assert sasl_password(k) == "rotated"


def _password_file(monkeypatch: pytest.MonkeyPatch, value: str) -> str:
    monkeypatch.setenv("JUDGEFLOW_KAFKA__SECURITY_PROTOCOL", "SASL_SSL")
    monkeypatch.setenv("JUDGEFLOW_KAFKA__SASL_MECHANISM", "PLAIN")
    monkeypatch.setenv("JUDGEFLOW_KAFKA__SASL_USERNAME", "u")
    monkeypatch.setenv("JUDGEFLOW_KAFKA__SASL_PASSWORD_FILE", value)
    with pytest.raises(ValidationError) as err:
        Settings()
    text = describe(err.value)
    assert "\n" not in text
    return text


def test_a_missing_secret_file_is_one_line_that_does_not_echo_the_value(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A password pasted into the _FILE variable by mistake is not printed back."""
    text = _password_file(monkeypatch, "S3cretPW-mistake")
    assert "JUDGEFLOW_KAFKA__SASL_PASSWORD_FILE: no readable file at the path given" in text
    assert "S3cretPW" not in text
    assert "S3cretPW" not in _password_file(monkeypatch, "/run/secrets/S3cretPW")


@pytest.mark.parametrize("content", ["", "\n", "  \r\n"])
def test_an_empty_secret_file_is_refused_at_start(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path, content: str) -> None:
    empty = tmp_path / "password"
    empty.write_text(content)
    text = _password_file(monkeypatch, str(empty))
    assert "JUDGEFLOW_KAFKA__SASL_PASSWORD_FILE: the file is empty" in text


@pytest.mark.parametrize("field", ["sasl_username_file", "sasl_oauth_token_file"])
def test_every_secret_file_is_checked_for_content(tmp_path: Path, field: str) -> None:
    empty = tmp_path / "secret"
    empty.write_text("\n")
    fields: dict[str, Any] = {"security_protocol": "SASL_SSL", field: empty}
    if field == "sasl_username_file":
        fields.update(sasl_mechanism="PLAIN", sasl_password="p")
    else:
        fields.update(sasl_mechanism="OAUTHBEARER")
    with pytest.raises(ValidationError) as err:
        Settings(kafka=fields)
    assert f"JUDGEFLOW_KAFKA__{field.upper()}: the file is empty" in describe(err.value)


def test_an_empty_password_is_refused() -> None:
    with pytest.raises(ValidationError) as err:
        Settings(kafka={**SCRAM, "sasl_password": ""})
    assert "JUDGEFLOW_KAFKA__SASL_PASSWORD is empty" in describe(err.value)


def test_secrets_are_hidden_from_config_but_reach_child_processes() -> None:
    s = Settings(kafka={**SCRAM, "sasl_password": "s3cret"})
    shown = settings_env(s)
    assert shown["JUDGEFLOW_KAFKA__SASL_PASSWORD"] == HIDDEN
    assert "s3cret" not in repr(shown) and "s3cret" not in repr(s)
    child = settings_env(s, reveal_secrets=True)
    assert child["JUDGEFLOW_KAFKA__SASL_PASSWORD"] == "s3cret"
    assert child["JUDGEFLOW_KAFKA__SECURITY_PROTOCOL"] == "SASL_SSL"


def test_the_key_password_is_a_secret_its_file_is_read_per_client(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pem: Path) -> None:
    from streams.kafka_settings import ssl_key_password

    s = Settings(kafka={"security_protocol": "SSL", "ssl_certfile": pem,
                        "ssl_key_password": "k3y"})
    shown = settings_env(s)
    assert shown["JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD"] == HIDDEN and "k3y" not in str(shown)
    assert settings_env(s, reveal_secrets=True)["JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD"] == "k3y"
    assert ssl_key_password(s.kafka) == "k3y"
    secret = tmp_path / "key-password"
    secret.write_text("from-file\n")
    for name in [n for n in os.environ if n.startswith("JUDGEFLOW_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("JUDGEFLOW_KAFKA__SECURITY_PROTOCOL", "SSL")
    monkeypatch.setenv("JUDGEFLOW_KAFKA__SSL_CERTFILE", str(pem))
    monkeypatch.setenv("JUDGEFLOW_KAFKA__SSL_KEY_PASSWORD_FILE", str(secret))
    k = Settings().kafka
    assert ssl_key_password(k) == "from-file"
    secret.write_text("rotated")
    assert ssl_key_password(k) == "rotated"
    assert "from-file" not in str(settings_env(Settings()))  # the path is shown, never the value

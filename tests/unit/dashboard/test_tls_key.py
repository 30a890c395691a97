"""``judgeflow dashboard --tls-key`` with an encrypted key is one line and exit 2, never
OpenSSL's ``Enter PEM pass phrase:`` prompt (which hangs on a terminal). Keys and
certificates are made with ``cryptography`` in-process, as a hospital's CA would issue them."""

from __future__ import annotations

import datetime as dt
import ipaddress
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from cli.main import main
from dashboard.server import tls_context

Encoding = serialization.Encoding
Format = serialization.PrivateFormat


def write_pair(d: Path, fmt: Format, password: bytes | None) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .sign(key, hashes.SHA256()))
    encryption = (serialization.BestAvailableEncryption(password) if password
                  else serialization.NoEncryption())
    cert_path, key_path = d / "cert.pem", d / "key.pem"
    cert_path.write_bytes(cert.public_bytes(Encoding.PEM))
    key_path.write_bytes(key.private_bytes(Encoding.PEM, fmt, encryption))
    return cert_path, key_path


FORMATS = [Format.PKCS8, Format.TraditionalOpenSSL]


@pytest.mark.parametrize("fmt", FORMATS, ids=["pkcs8", "traditional"])
def test_an_encrypted_key_is_one_line_and_exit_2(
        fmt: Format, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("JUDGEFLOW_STATE_DIR", str(tmp_path / "state"))
    cert, key = write_pair(tmp_path, fmt, b"pass phrase")
    assert main(["dashboard", "--tls-cert", str(cert), "--tls-key", str(key),
                 "--port", "0"]) == 2
    captured = capsys.readouterr()
    assert f"the key {key} is encrypted" in captured.err, captured.err
    assert captured.err.count("\n") == 1 and "PEM pass phrase" not in captured.err
    assert "Traceback" not in captured.err and captured.out == ""


@pytest.mark.parametrize("fmt", FORMATS, ids=["pkcs8", "traditional"])
def test_an_unencrypted_key_loads(fmt: Format, tmp_path: Path) -> None:
    cert, key = write_pair(tmp_path, fmt, None)
    assert tls_context(cert, key) is not None

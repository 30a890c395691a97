"""A throw-away certificate authority for the test brokers (``openssl`` CLI, EC P-256).

:class:`TestCA` creates a CA, then issues leaf certificates signed by it: one for the brokers
(SAN ``IP:127.0.0.1``, ``DNS:localhost``, so hostname verification stays on) and one per client
principal (CN = the principal's name; the brokers map ``CN=alice`` to ``User:alice``). Keys are
unencrypted PKCS#8 PEM, which both Python's ``ssl`` and Kafka's PEM key stores
(``ssl.keystore.type=PEM``) read. Valid for two days: a test fixture, never a real CA.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tools.kafka.classpath import KafkaUnavailable

DAYS = "2"


@dataclass(frozen=True)
class CertPair:
    """A leaf certificate: ``cert`` (leaf then CA), ``key`` (PKCS#8), and ``keystore`` (key
    followed by the chain: the single PEM file Kafka's ``ssl.keystore.location`` takes)."""

    name: str
    cert: Path
    key: Path
    keystore: Path


def _openssl(*args: str, cwd: Path) -> None:
    exe = shutil.which("openssl")
    if exe is None:
        raise KafkaUnavailable("the test CA needs the `openssl` command (apt-get install openssl)")
    proc = subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise KafkaUnavailable(f"openssl {args[0]} failed: {proc.stderr.strip()[-300:]}")


class TestCA:
    """``TestCA(dir)``: ``ca_file`` is the CA certificate clients trust; :meth:`issue` makes
    (once) a certificate for a name."""

    __test__ = False  # not a pytest class

    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.ca_file = self.dir / "ca.crt"
        self.ca_key = self.dir / "ca.key"
        if not self.ca_file.is_file():
            self._key(self.ca_key)
            _openssl("req", "-x509", "-new", "-key", self.ca_key.name, "-out",
                     self.ca_file.name, "-days", DAYS, "-subj", "/CN=judgeflow-test-ca",
                     "-addext", "basicConstraints=critical,CA:TRUE",
                     "-addext", "keyUsage=critical,keyCertSign,cRLSign", cwd=self.dir)
        self._issued: dict[str, CertPair] = {}

    def _key(self, path: Path) -> None:
        _openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256",
                 "-out", path.name, cwd=self.dir)

    def issue(self, name: str, *, server: bool = False) -> CertPair:
        """The certificate for ``name`` (a client principal, or the brokers with
        ``server=True``), created on first use."""
        if name in self._issued:
            return self._issued[name]
        if not name.replace("-", "").replace("_", "").isalnum():
            raise ValueError(f"certificate name must be alphanumeric (with - or _): {name!r}")
        key, csr, leaf = (self.dir / f"{name}.{ext}" for ext in ("key", "csr", "leaf.crt"))
        self._key(key)
        _openssl("req", "-new", "-key", key.name, "-out", csr.name, "-subj", f"/CN={name}",
                 cwd=self.dir)
        ext = self.dir / f"{name}.ext"
        usage = "serverAuth,clientAuth" if server else "clientAuth"
        lines = ["basicConstraints=CA:FALSE", f"extendedKeyUsage={usage}",
                 "keyUsage=critical,digitalSignature,keyEncipherment"]
        if server:
            lines.append("subjectAltName=IP:127.0.0.1,DNS:localhost")
        ext.write_text("\n".join(lines) + "\n")
        _openssl("x509", "-req", "-in", csr.name, "-CA", self.ca_file.name, "-CAkey",
                 self.ca_key.name, "-CAcreateserial", "-out", leaf.name, "-days", DAYS,
                 "-sha256", "-extfile", ext.name, cwd=self.dir)
        chain = leaf.read_text() + self.ca_file.read_text()
        cert = self.dir / f"{name}.crt"
        cert.write_text(chain)
        keystore = self.dir / f"{name}.keystore.pem"
        keystore.write_text(key.read_text() + chain)
        for path in (csr, ext, leaf):
            path.unlink()
        pair = CertPair(name, cert, key, keystore)
        self._issued[name] = pair
        return pair

"""A throwaway certificate authority for local TLS, made with ``openssl``: PEM files only.

``LocalCA(home)`` creates (once) a CA under ``home`` and issues leaf certificates signed by it:
servers get ``127.0.0.1`` and ``localhost`` as subject alternative names, clients a subject of
their own (Kafka's default principal builder turns it into ``User:CN=...``). Keys are EC P-256
in PKCS#8, which both Python's ``ssl`` and Kafka's PEM key stores read. For the local broker,
the demo and the tests; a real deployment brings its own certificates.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from configwatch.errors import SetupError

__all__ = ["LocalCA", "Pem"]

DAYS = 30
_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


@dataclass(frozen=True)
class Pem:
    """A certificate and its private key, as PEM files."""

    cert: Path
    key: Path

    def bundle(self) -> Path:
        """Key then certificate in one file (Kafka's ``ssl.keystore.type=PEM`` key store); written once."""
        path = self.cert.with_suffix(".keystore.pem")
        if not path.exists():
            path.write_text(self.key.read_text() + self.cert.read_text())
        return path


class LocalCA:
    """A CA under ``home`` (``ca.pem``, ``ca.key``) and the certificates it issued there."""

    def __init__(self, home: Path) -> None:
        self.home = Path(home)
        self.cert = self.home / "ca.pem"
        self._key = self.home / "ca.key"
        if not self.cert.exists():
            self.home.mkdir(parents=True, exist_ok=True)
            _openssl("req", "-x509", *_KEY, "-keyout", str(self._key), "-out", str(self.cert), "-days", str(DAYS),
                     "-subj", "/O=configwatch/CN=configwatch local CA",
                     "-addext", "basicConstraints=critical,CA:TRUE",
                     "-addext", "keyUsage=critical,keyCertSign,cRLSign")

    def issue(self, name: str, subject: str, *, server: bool = False) -> Pem:
        """The certificate ``name`` for ``subject`` (``/O=.../CN=...``); issued on the first call."""
        pem = Pem(self.home / f"{name}.pem", self.home / f"{name}.key")
        if pem.cert.exists() and pem.key.exists():
            return pem
        csr, ext = self.home / f"{name}.csr", self.home / f"{name}.ext"
        lines = ["basicConstraints=CA:FALSE", "keyUsage=critical,digitalSignature,keyEncipherment",
                 f"extendedKeyUsage={'serverAuth,clientAuth' if server else 'clientAuth'}"]
        if server:
            lines.append("subjectAltName=IP:127.0.0.1,DNS:localhost")
        ext.write_text("\n".join(lines) + "\n")
        _openssl("req", *_KEY, "-keyout", str(pem.key), "-out", str(csr), "-subj", subject)
        _openssl("x509", "-req", "-in", str(csr), "-CA", str(self.cert), "-CAkey", str(self._key),
                 "-CAcreateserial", "-out", str(pem.cert), "-days", str(DAYS), "-extfile", str(ext))
        csr.unlink()
        ext.unlink()
        return pem


def _openssl(*args: str) -> None:
    exe = shutil.which("openssl")
    if exe is None:
        raise SetupError("openssl is not installed; it makes the local certificates (apt install openssl)")
    proc = subprocess.run([exe, *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SetupError(f"openssl {args[0]} failed: {proc.stderr.strip()[-300:]}")

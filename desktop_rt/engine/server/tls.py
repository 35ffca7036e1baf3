"""TLS for the server: a certificate and key as an ``ssl`` context, and a self-signed pair.

:func:`server_context` turns ``--tls-cert``/``--tls-key`` files into the server's
:class:`ssl.SSLContext`, or raises :class:`TlsError` saying which file is missing, unreadable,
not PEM, or not the key of that certificate. :func:`self_signed_pair` makes a key and a
self-signed certificate for this machine's names once, in a folder (the config dir's ``tls/``),
and reuses them while they are valid and name the requested host; :func:`fingerprint` is the
SHA-256 a LAN user compares with what their client shows.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path
from ssl import SSLContext

from desktop_rt.errors import DesktopRtError

__all__ = [
    "SSLContext",
    "TlsError",
    "TlsFiles",
    "server_context",
    "self_signed_pair",
    "fingerprint",
    "SELF_SIGNED_DAYS",
]

SELF_SIGNED_DAYS = 825
"""How long a generated certificate is valid (the longest that Apple's clients accept)."""
_RENEW_BEFORE = datetime.timedelta(days=30)
_WILDCARDS = {"", "0.0.0.0", "::"}


class TlsError(DesktopRtError):
    """A certificate or key cannot be used; the message names the file and what to do."""


@dataclass(frozen=True)
class TlsFiles:
    """A PEM certificate (chain) and its private key."""

    cert: Path
    key: Path


def _readable(path: Path, what: str, flag: str) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise TlsError(f"The TLS {what} file {path} does not exist; check {flag}.") from None
    except IsADirectoryError:
        raise TlsError(f"The TLS {what} {path} is a folder, not a file; check {flag}.") from None
    except OSError as exc:
        raise TlsError(
            f"The TLS {what} file {path} cannot be read ({exc.strerror or exc}); check its "
            f"permissions."
        ) from None


def server_context(files: TlsFiles) -> SSLContext:
    """A server context holding ``files``; :class:`TlsError` says what is wrong with them."""
    cert = _readable(files.cert, "certificate", "--tls-cert")
    key = _readable(files.key, "key", "--tls-key")
    if b"-----BEGIN CERTIFICATE-----" not in cert:
        raise TlsError(
            f"{files.cert} is not a PEM certificate (no '-----BEGIN CERTIFICATE-----' line); "
            f"give --tls-cert the certificate, --tls-key its private key."
        )
    if b"PRIVATE KEY-----" not in key:
        raise TlsError(
            f"{files.key} is not a PEM private key (no '-----BEGIN ... PRIVATE KEY-----' line); "
            f"give --tls-key the private key of the certificate."
        )
    context = SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(files.cert, files.key)
    except ssl.SSLError as exc:
        if "KEY_VALUES_MISMATCH" in str(exc) or exc.reason == "KEY_VALUES_MISMATCH":
            raise TlsError(
                f"The key {files.key} is not the private key of the certificate {files.cert}; "
                f"give the pair that was issued together."
            ) from None
        raise TlsError(
            f"The certificate {files.cert} or key {files.key} cannot be used ({exc.reason or exc}); "
            f"an encrypted key is not supported: give it unencrypted (readable only by you)."
        ) from None
    return context


def fingerprint(cert: Path) -> str:
    """The certificate's SHA-256 fingerprint as colon-separated hex (what browsers show)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    loaded = x509.load_pem_x509_certificate(_readable(cert, "certificate", "--tls-cert"))
    return loaded.fingerprint(hashes.SHA256()).hex(":").upper()


def machine_names(host: str) -> tuple[list[str], list[str]]:
    """``(DNS names, IP addresses)`` a certificate for a server bound to ``host`` should name."""
    dns, ips = ["localhost"], ["127.0.0.1", "::1"]
    hostname = socket.gethostname()
    if hostname and hostname.isascii() and hostname not in dns:
        dns.append(hostname)
    candidates = [host] if host not in _WILDCARDS else []
    if host in _WILDCARDS:
        try:  # the address of the default route: no packet is sent by a UDP connect
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
                probe.connect(("192.0.2.1", 9))
                candidates.append(probe.getsockname()[0])
        except OSError:
            pass
    for name in candidates:
        try:
            address = str(ipaddress.ip_address(name.strip("[]")))
        except ValueError:
            address = ""
        names = ips if address else dns
        if (address or name) not in names:
            names.append(address or name)
    return dns, ips


def _covers(files: TlsFiles, host: str) -> bool:
    """The pair exists, loads, is valid for 30 more days and names ``host``."""
    from cryptography import x509

    try:
        cert = x509.load_pem_x509_certificate(files.cert.read_bytes())
        server_context(files)
    except (OSError, ValueError, TlsError):
        return False
    if cert.not_valid_after_utc - datetime.datetime.now(datetime.timezone.utc) < _RENEW_BEFORE:
        return False
    try:
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return False
    have = {str(n) for n in names.get_values_for_type(x509.IPAddress)}
    have |= set(names.get_values_for_type(x509.DNSName))
    dns, ips = machine_names(host)
    return set(dns) | set(ips) <= have


def self_signed_pair(folder: Path, host: str = "127.0.0.1") -> tuple[TlsFiles, bool]:
    """``(files, created)``: the pair in ``folder``, made now unless a valid one names ``host``."""
    files = TlsFiles(folder / "desktop-rt-cert.pem", folder / "desktop-rt-key.pem")
    if _covers(files, host):
        return files, False
    cert_pem, key_pem = _generate(*machine_names(host))
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp_key = files.key.with_suffix(".tmp")
        fd = os.open(tmp_key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(key_pem)
        tmp_cert = files.cert.with_suffix(".tmp")
        tmp_cert.write_bytes(cert_pem)
        os.replace(tmp_key, files.key)
        os.replace(tmp_cert, files.cert)
    except OSError as exc:
        raise TlsError(
            f"Could not write a self-signed certificate into {folder} ({exc.strerror or exc}); "
            f"give your own with --tls-cert and --tls-key."
        ) from None
    return files, True


def _generate(dns: list[str], ips: list[str]) -> tuple[bytes, bytes]:
    """A P-256 key and a certificate it signs for ``dns`` and ``ips``, both PEM."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"desktop-rt on {dns[-1]}")])
    now = datetime.datetime.now(datetime.timezone.utc)
    alt = [x509.DNSName(n) for n in dns] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    public = key.public_key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=SELF_SIGNED_DAYS))
        .add_extension(x509.SubjectAlternativeName(alt), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem

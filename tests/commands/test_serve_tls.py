"""``desktop-rt serve`` with TLS as a real subprocess: ``--tls-self-signed`` prints the
fingerprint of the certificate it really serves; wrong ``--tls-cert``/``--tls-key`` are refused
before the model loads, with a message that names the problem."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import socket
import ssl
import sys
import urllib.request
from pathlib import Path

import pytest
import trustme

from tests.commands.test_serve import TIMEOUT, read_until
from tests.support.rt_client import open_client


async def serve(config_dir: Path, *args: str) -> asyncio.subprocess.Process:
    env = {**os.environ, "DESKTOP_RT_CONFIG_DIR": str(config_dir)}
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "desktop_rt.cli",
        "serve",
        "--port",
        "0",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )


def served_fingerprint(port: int, context: ssl.SSLContext) -> str:
    with (
        socket.create_connection(("127.0.0.1", port), timeout=30) as raw,
        context.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return hashlib.sha256(der).hexdigest().upper()


@pytest.mark.slow
async def test_self_signed_serves_wss_with_the_printed_fingerprint(default_model_dir, tmp_path):
    proc = await serve(tmp_path, "--tls-self-signed")
    try:
        made = await read_until(proc.stdout, r"made the self-signed certificate (\S+)")
        cert = Path(made.group(1))
        assert cert.parent == tmp_path / "tls"
        printed = (await read_until(proc.stdout, r"SHA-256 fingerprint ([0-9A-F:]{95})")).group(1)
        match = await read_until(
            proc.stdout, r"listening on (wss://127\.0\.0\.1:(\d+)/v1/realtime)"
        )
        url, port = match.group(1), int(match.group(2))
        context = ssl.create_default_context(cafile=str(cert))
        # what a LAN user compares: the certificate on the wire is the one printed
        assert await asyncio.to_thread(served_fingerprint, port, context) == printed.replace(
            ":", ""
        )
        with await asyncio.to_thread(
            urllib.request.urlopen, f"https://localhost:{port}/health", None, 30, context=context
        ) as reply:
            assert json.loads(reply.read())["status"] == "ok"
        client = await open_client(url, ssl=context)
        await client.ws.close()
        proc.send_signal(signal.SIGINT)
        assert await asyncio.wait_for(proc.wait(), TIMEOUT) == 0
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def refused(tmp_path: Path, *args: str) -> str:
    proc = await serve(tmp_path, *args)
    out, err = await asyncio.wait_for(proc.communicate(), TIMEOUT)
    assert proc.returncode == 1, (out, err)
    assert b"loading model" not in out  # refused before the model loads
    return err.decode()


async def test_wrong_tls_files_are_refused_before_loading(tmp_path):
    ca = trustme.CA()
    one, two = ca.issue_cert("localhost"), ca.issue_cert("localhost")
    cert, other_key = tmp_path / "cert.pem", tmp_path / "other-key.pem"
    one.cert_chain_pems[0].write_to_path(str(cert))
    two.private_key_pem.write_to_path(str(other_key))
    missing = tmp_path / "missing.pem"
    err = await refused(tmp_path, "--tls-cert", str(missing), "--tls-key", str(other_key))
    assert f"{missing} does not exist; check --tls-cert" in err
    err = await refused(tmp_path, "--tls-cert", str(cert), "--tls-key", str(other_key))
    assert "is not the private key of the certificate" in err
    err = await refused(tmp_path, "--tls-cert", str(cert))
    assert "--tls-cert and --tls-key go together" in err
    err = await refused(tmp_path, "--tls-self-signed", "--tls-cert", str(cert))
    assert "drop --tls-cert and --tls-key" in err

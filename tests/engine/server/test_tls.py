"""TLS: certificate files as a server context, the self-signed pair, and a real server on loopback
serving ``https://`` and ``wss://`` to the official ``openai`` SDK that trusts a test CA."""

from __future__ import annotations

import asyncio
import hashlib
import ssl
import stat

import httpx2
import pytest
import trustme
from openai import AsyncOpenAI, OpenAI
from websockets.asyncio.client import connect

from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from desktop_rt.engine.server.tls import (
    TlsError,
    TlsFiles,
    fingerprint,
    self_signed_pair,
    server_context,
)
from tests.support.clips import DATA, read_clip, reference_text, wer
from tests.support.rt_client import EVENT_TIMEOUT, chunks_b64

KEY = "sk-desktop-rt-tls"
CLIP = "ss-0870"


@pytest.fixture(scope="module")
def ca() -> trustme.CA:
    return trustme.CA()


def write_pair(ca: trustme.CA, folder, *names: str) -> TlsFiles:
    issued = ca.issue_cert(*(names or ("localhost", "127.0.0.1")))
    files = TlsFiles(folder / "cert.pem", folder / "key.pem")
    issued.cert_chain_pems[0].write_to_path(str(files.cert))
    issued.private_key_pem.write_to_path(str(files.key))
    return files


# ---- files ----------------------------------------------------------------------------------


def test_a_good_pair_loads(ca, tmp_path):
    assert isinstance(server_context(write_pair(ca, tmp_path)), ssl.SSLContext)


def test_missing_files_are_named(ca, tmp_path):
    files = write_pair(ca, tmp_path)
    with pytest.raises(TlsError, match=r"certificate file .*nope\.pem does not exist.*--tls-cert"):
        server_context(TlsFiles(tmp_path / "nope.pem", files.key))
    with pytest.raises(TlsError, match=r"key file .*gone\.pem does not exist.*--tls-key"):
        server_context(TlsFiles(files.cert, tmp_path / "gone.pem"))


def test_unreadable_and_wrong_files_are_explained(ca, tmp_path):
    files = write_pair(ca, tmp_path)
    with pytest.raises(TlsError, match="is a folder, not a file"):
        server_context(TlsFiles(tmp_path, files.key))
    with pytest.raises(TlsError, match="is not a PEM certificate"):
        server_context(TlsFiles(files.key, files.cert))  # swapped
    with pytest.raises(TlsError, match="is not a PEM private key"):
        server_context(TlsFiles(files.cert, files.cert))
    garbled = tmp_path / "garbled.pem"
    garbled.write_text("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n")
    with pytest.raises(TlsError, match="cannot be used"):
        server_context(TlsFiles(garbled, files.key))


def test_a_key_of_another_certificate_is_a_mismatch(ca, tmp_path):
    one = write_pair(ca, tmp_path)
    (tmp_path / "other").mkdir()
    other = write_pair(ca, tmp_path / "other")
    with pytest.raises(TlsError, match="is not the private key of the certificate"):
        server_context(TlsFiles(one.cert, other.key))


def test_the_self_signed_pair_is_made_once_and_reused(tmp_path):
    folder = tmp_path / "tls"
    files, created = self_signed_pair(folder, "127.0.0.1")
    assert created and stat.S_IMODE(files.key.stat().st_mode) == 0o600
    first = fingerprint(files.cert)
    der = ssl.PEM_cert_to_DER_cert(files.cert.read_text())
    assert first.replace(":", "") == hashlib.sha256(der).hexdigest().upper()
    again, created = self_signed_pair(folder, "localhost")
    assert (again, created) == (files, False) and fingerprint(again.cert) == first
    files.cert.write_text("damaged")
    _, created = self_signed_pair(folder, "127.0.0.1")
    assert created and fingerprint(files.cert) != first
    server_context(files)


def test_a_new_host_name_makes_a_new_pair(tmp_path):
    files, _ = self_signed_pair(tmp_path, "127.0.0.1")
    before = fingerprint(files.cert)
    _, created = self_signed_pair(tmp_path, "desktop-rt.lan")
    assert created and fingerprint(files.cert) != before


def test_an_unwritable_folder_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(TlsError, match="Could not write a self-signed certificate"):
        self_signed_pair(blocker / "tls")


def test_the_server_refuses_to_start_on_bad_files(whisper_backend, tmp_path):
    bad = TlsFiles(tmp_path / "cert.pem", tmp_path / "key.pem")
    server = RealtimeServer(ServerConfig(port=0, tls=bad, record_activity=False), whisper_backend)
    with pytest.raises(TlsError, match="does not exist"):
        server.start()


# ---- a real server --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tls_server(whisper_backend, ca, tmp_path_factory):
    files = write_pair(ca, tmp_path_factory.mktemp("tls"))
    config = ServerConfig(port=0, api_key=KEY, tls=files, record_activity=False)
    with RealtimeServer(config, whisper_backend) as server:
        yield server


def trusting(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


def test_urls_name_the_secure_schemes(tls_server):
    assert tls_server.url == f"wss://127.0.0.1:{tls_server.port}/v1/realtime"
    assert tls_server.http_url == f"https://127.0.0.1:{tls_server.port}"


@pytest.mark.slow
def test_the_sdk_transcribes_a_file_over_https(tls_server, ca):
    http = httpx2.Client(verify=trusting(ca))
    client = OpenAI(
        api_key=KEY, base_url=f"{tls_server.http_url}/v1", http_client=http, max_retries=0
    )
    with (DATA / f"{CLIP}.wav").open("rb") as audio:
        result = client.audio.transcriptions.create(model="whisper-1", file=audio)
    assert wer(reference_text(CLIP), result.text) <= 0.1, result.text
    ids = [m.id for m in client.models.list().data]
    assert "whisper-base" in ids


def test_a_client_that_does_not_trust_the_ca_is_refused(tls_server):
    with pytest.raises(httpx2.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
        httpx2.get(f"{tls_server.http_url}/health")


async def test_plain_ws_to_a_tls_port_does_not_connect(tls_server):
    with pytest.raises(Exception):  # noqa: B017 - the TLS server drops a plain handshake
        async with connect(f"ws://127.0.0.1:{tls_server.port}/v1/realtime", open_timeout=10):
            pass


@pytest.mark.slow
async def test_the_sdk_realtime_client_over_wss(tls_server, ca):
    client = AsyncOpenAI(
        api_key=KEY,
        base_url=f"{tls_server.http_url}/v1",
        http_client=httpx2.AsyncClient(verify=trusting(ca)),
    )
    options = {"ssl": trusting(ca)}
    async with client.realtime.connect(
        model="whisper-base",
        extra_query={"intent": "transcription"},
        websocket_connection_options=options,  # type: ignore[typeddict-unknown-key]
    ) as conn:

        async def until(kind: str):
            async for event in conn:
                assert event.type != "error", event
                if event.type == kind:
                    return event
            raise AssertionError(f"closed before {kind}")

        created = await asyncio.wait_for(until("session.created"), EVENT_TIMEOUT)
        assert created.session.type == "transcription"
        for chunk in chunks_b64(read_clip(CLIP), rate=24_000):
            await conn.input_audio_buffer.append(audio=chunk)
        await conn.input_audio_buffer.commit()
        completed = await asyncio.wait_for(
            until("conversation.item.input_audio_transcription.completed"), EVENT_TIMEOUT
        )
    assert wer(reference_text(CLIP), completed.transcript) < 0.25, completed.transcript

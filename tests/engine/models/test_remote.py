"""``remote`` models: a second ``desktop-rt serve`` (a real subprocess, on ``wss://`` with its
self-signed certificate and an API key) proxied untouched, with the key from the environment,
the certificate verified, limits, ttl and an activity row; and what fails, said clearly."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import openai
import pytest
from openai import OpenAI
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from desktop_rt.engine.models.catalogue import EMBEDDED_ENTRY, ModelEntry, ModelsConfig
from desktop_rt.engine.models.remote import RemoteRuntime, remote_url
from desktop_rt.engine.models.router_types import ModelLoadError
from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from tests.support.clips import read_clip, reference_text
from tests.support.rt_client import COMPLETED, EVENT_TIMEOUT, check_item_order, chunks_b64, wer

UPSTREAM_KEY = "sk-desktop-rt-upstream"
KEY_ENV = "DESKTOP_RT_TEST_UPSTREAM_KEY"


def test_the_url_keeps_its_query_and_the_clients_with_the_upstream_model():
    assert (
        remote_url("wss://h:1/v1/realtime?model=x", "/v1/realtime?intent=transcription", "m")
        == "wss://h:1/v1/realtime?intent=transcription&model=m"
    )
    assert remote_url("ws://h:1", "/v1/realtime?model=mine&a=1", "up") == (
        "ws://h:1/v1/realtime?a=1&model=up"
    )
    assert remote_url("ws://h/x?a=own", "/v1/realtime?a=client", "m") == "ws://h/x?a=own&model=m"


@pytest.fixture(scope="module")
def upstream(tmp_path_factory, default_model_dir):
    """``desktop-rt serve --tls-self-signed --api-key ...`` on a free port: (url, cert)."""
    config_dir = tmp_path_factory.mktemp("upstream-config")
    env = {**os.environ, "DESKTOP_RT_CONFIG_DIR": str(config_dir)}
    args = ["serve", "--port", "0", "--api-key", UPSTREAM_KEY, "--tls-self-signed"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "desktop_rt.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    try:
        deadline, url = time.monotonic() + 120, None
        while url is None and time.monotonic() < deadline and proc.stdout is not None:
            line = proc.stdout.readline()
            assert line, f"the upstream server exited ({proc.wait()})"
            if match := re.search(r"listening on (wss://\S+)", line):
                url = match.group(1)
        assert url, "the upstream server did not start within 120 s"
        yield url, config_dir / "tls" / "desktop-rt-cert.pem"
    finally:
        proc.terminate()
        proc.wait(30)


def remote(model_id: str, url: str, **options: str) -> ModelEntry:
    extra = {"api_key_env": KEY_ENV, "upstream_model": "whisper-base", **options}
    return ModelEntry(
        model_id, "remote", options=(("url", url), *extra.items()), ttl=0.3, concurrency_limit=1
    )


@pytest.fixture
def local(upstream, whisper_backend, tmp_path, monkeypatch):
    url, cert = upstream
    monkeypatch.setenv(KEY_ENV, UPSTREAM_KEY)
    monkeypatch.setenv("DESKTOP_RT_TEST_WRONG_KEY", "sk-wrong")
    monkeypatch.delenv("DESKTOP_RT_TEST_UNSET", raising=False)
    entries = (
        EMBEDDED_ENTRY,
        remote("gpu", url, ca_file=str(cert)),
        remote("no-ca", url),
        remote("bad-key", url, ca_file=str(cert), api_key_env="DESKTOP_RT_TEST_WRONG_KEY"),
        remote("no-env", url, ca_file=str(cert), api_key_env="DESKTOP_RT_TEST_UNSET"),
    )
    config = ServerConfig(
        port=0,
        api_key="sk-local",
        models=ModelsConfig(entries, max_loaded_models=5),
        activity_path=tmp_path / "activity.sqlite3",
    )
    with RealtimeServer(config, whisper_backend) as server:
        yield server


LOCAL_AUTH = {"Authorization": "Bearer sk-local"}


@pytest.mark.slow
async def test_a_remote_model_is_proxied_with_its_key_over_verified_tls(local):
    server, clip = local, read_clip("ss-0870")
    url = server.url + "?model=gpu&intent=transcription"
    async with connect(url, additional_headers=LOCAL_AUTH, max_size=None) as ws:
        created = json.loads(await ws.recv())
        assert created["type"] == "session.created"
        # the limit of 1 is this machine's: a second client is refused at the handshake
        with pytest.raises(InvalidStatus) as refused:
            async with connect(url, additional_headers=LOCAL_AUTH):
                pass
        assert refused.value.response.status_code == 429
        for chunk in chunks_b64(clip, 24_000):
            await ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": chunk}))
        await ws.send(json.dumps({"type": "input_audio_buffer.commit", "final": True}))
        events = [created]
        with pytest.raises(ConnectionClosed):
            while True:
                events.append(json.loads(await asyncio_recv(ws)))
    assert ws.close_code == 1000  # the upstream's close, passed on
    check_item_order(events)
    (done,) = [e for e in events if e["type"] == COMPLETED]
    assert wer(reference_text("ss-0870"), done["transcript"]) < 0.25, done
    router = server.router
    assert await asyncio.to_thread(
        router.wait_for, lambda s: s["gpu"].state == "stopped", EVENT_TIMEOUT
    )
    assert router.snapshot()["gpu"].last_unload == "unloaded after its ttl of 0.3 s"
    assert await asyncio.to_thread(server.activity.wait_recorded, 1, EVENT_TIMEOUT)
    (row,) = server.activity.rows()
    assert row.model == "gpu" and row.items == 1 and row.close_code == 1000
    assert row.session_id == created["session"]["id"]
    assert row.audio_seconds == pytest.approx(len(clip) / 16_000, abs=0.1)


async def asyncio_recv(ws) -> str:
    return await asyncio.wait_for(ws.recv(), EVENT_TIMEOUT)


async def refusal(server: RealtimeServer, model: str) -> dict:
    url = server.url + f"?model={model}"
    async with connect(url, additional_headers=LOCAL_AUTH) as ws:
        error = json.loads(await asyncio_recv(ws))
        with pytest.raises(ConnectionClosed):
            await asyncio_recv(ws)
    assert ws.close_code == 1011 and error["type"] == "error", error
    assert error["error"]["code"] == "model_load_failed"
    return error["error"]


@pytest.mark.slow
async def test_an_untrusted_certificate_a_wrong_key_and_no_key_are_load_failures(local):
    untrusted = await refusal(local, "no-ca")
    assert (
        "CERTIFICATE_VERIFY_FAILED" in untrusted["message"]
        or "certificate" in (untrusted["message"])
    ), untrusted
    assert "the remote server wss://" in untrusted["message"]
    wrong = await refusal(local, "bad-key")
    assert "HTTP 401" in wrong["message"], wrong
    assert "sk-wrong" not in wrong["message"]
    unset = await refusal(local, "no-env")
    assert "DESKTOP_RT_TEST_UNSET" in unset["message"] and "is not set" in unset["message"]


@pytest.mark.slow
async def test_a_plain_ws_upstream_and_the_clients_query(whisper_backend, tmp_path):
    """ws:// without a key, the upstream's name for the model in the query it receives."""
    with RealtimeServer(ServerConfig(port=0, record_activity=False), whisper_backend) as up:
        entry = ModelEntry(
            "lan", "remote", options=(("url", f"ws://127.0.0.1:{up.port}"),)
        )  # no path: /v1/realtime; no upstream_model: its id, which the upstream does not know
        config = ServerConfig(
            port=0,
            record_activity=False,
            models=ModelsConfig((EMBEDDED_ENTRY, entry), max_loaded_models=2),
        )
        with RealtimeServer(config, whisper_backend) as server:
            async with connect(server.url + "?model=lan") as ws:
                error = json.loads(await asyncio_recv(ws))
                with pytest.raises(ConnectionClosed):
                    await asyncio_recv(ws)
    # the upstream's own refusal, passed through untouched
    assert error["error"]["code"] == "model_not_found" and "'lan'" in error["error"]["message"]
    assert ws.close_code == 1008


def test_an_unreadable_ca_file_is_a_load_failure(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, UPSTREAM_KEY)
    bad = tmp_path / "ca.pem"
    bad.write_text("not a certificate")
    runtime = RemoteRuntime(remote("r", "wss://h:1/v1/realtime", ca_file=str(bad)))
    with pytest.raises(ModelLoadError, match=r"options.ca_file of 'r' .*ca.pem"):
        asyncio.run(runtime.start())
    assert not runtime.alive


def wav() -> Path:
    return Path(__file__).parents[2] / "data" / "ss-0870.wav"


@pytest.mark.slow
def test_rest_calls_are_passed_on_as_they_came(local):
    client = OpenAI(api_key="sk-local", base_url=f"{local.http_url}/v1", max_retries=0)
    with wav().open("rb") as audio:
        result = client.audio.transcriptions.create(model="gpu", file=audio, language="en")
    assert wer(reference_text("ss-0870"), result.text) <= 0.1, result.text
    with wav().open("rb") as audio:
        events = list(
            client.audio.transcriptions.create(
                model="gpu", file=audio, stream=True, response_format="text"
            )
        )
    (done,) = [e for e in events if e.type == "transcript.text.done"]
    assert "".join(e.delta for e in events if e.type == "transcript.text.delta") == done.text
    with wav().open("rb") as audio:
        srt = client.audio.transcriptions.create(model="gpu", file=audio, response_format="srt")
    assert srt.startswith("1\n00:00:00")
    assert local.activity.wait_recorded(3, EVENT_TIMEOUT)
    rows = local.activity.rows()
    assert {(r.model, r.close_reason) for r in rows} == {("gpu", "POST transcription passed on")}, [
        (r.close_reason, r.words, r.audio_seconds) for r in rows
    ]
    assert any(r.words == len(result.text.split()) for r in rows)


@pytest.mark.slow
def test_rest_errors_of_the_upstream_and_of_reaching_it(local, tmp_path):
    client = OpenAI(api_key="sk-local", base_url=f"{local.http_url}/v1", max_retries=0)
    with wav().open("rb") as audio, pytest.raises(openai.APIStatusError) as untrusted:
        client.audio.transcriptions.create(model="no-ca", file=audio)
    assert untrusted.value.status_code == 502
    assert untrusted.value.body["code"] == "upstream_unreachable"
    assert "certificate" in untrusted.value.body["message"].lower()
    with wav().open("rb") as audio, pytest.raises(openai.AuthenticationError) as wrong:
        client.audio.transcriptions.create(model="bad-key", file=audio)
    assert wrong.value.body["code"] == "invalid_api_key"  # the upstream's own answer


def test_a_key_with_a_line_break_is_refused_before_it_reaches_a_header(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-x\r\nX-Injected: 1")
    runtime = RemoteRuntime(remote("r", "ws://h:1/v1/realtime"))
    with pytest.raises(ModelLoadError, match=f"{KEY_ENV} holds spaces or line breaks"):
        asyncio.run(runtime.start())
    assert "sk-x" not in str(runtime.upstream("/v1/realtime"))

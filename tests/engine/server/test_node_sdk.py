"""The official ``openai`` Node SDK (npm, pinned in tests/node) as a realtime client: on plain
``ws://`` on loopback with the settings docs/protocol.md gives, and over ``wss://`` with the
self-signed certificate trusted through ``NODE_EXTRA_CA_CERTS``."""

from __future__ import annotations

import pytest

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.codecs import float_to_pcm16
from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from desktop_rt.engine.server.tls import self_signed_pair
from tests.support.clips import read_clip, reference_text, wer
from tests.support.node_sdk import run_node_client

KEY = "sk-desktop-rt-node"
CLIP = "ss-0870"
COMPLETED = "conversation.item.input_audio_transcription.completed"


@pytest.fixture(scope="module")
def pcm_file(tmp_path_factory):
    import soxr

    path = tmp_path_factory.mktemp("node") / f"{CLIP}.pcm"
    path.write_bytes(float_to_pcm16(soxr.resample(read_clip(CLIP), SAMPLE_RATE, 24_000)))
    return path


def check(run) -> None:
    assert run.returncode == 0, run.stderr
    assert run.of_type("session.created") and run.of_type("session.updated"), run.events
    (completed,) = run.of_type(COMPLETED)
    assert wer(reference_text(CLIP), completed["transcript"]) < 0.25, completed["transcript"]


@pytest.mark.slow
def test_the_node_sdk_on_plain_ws(whisper_backend, pcm_file):
    config = ServerConfig(port=0, api_key=KEY, record_activity=False)
    with RealtimeServer(config, whisper_backend) as server:
        run = run_node_client(f"{server.http_url}/v1", pcm_file, api_key=KEY, plain=True)
        # the SDK's model in ?model= (issue 16 bug 3): an OpenAI name reaches the default model
        named = run_node_client(
            f"{server.http_url}/v1",
            pcm_file,
            api_key=KEY,
            plain=True,
            model="gpt-4o-mini-transcribe",
        )
    check(run)
    check(named)
    (created,) = named.of_type("session.created")
    assert created["session"]["audio"]["input"]["transcription"]["model"] == "whisper-base"


@pytest.mark.slow
def test_the_node_sdk_over_wss_with_the_self_signed_certificate(
    whisper_backend, pcm_file, tmp_path
):
    files, _ = self_signed_pair(tmp_path / "tls", "127.0.0.1")
    config = ServerConfig(port=0, api_key=KEY, tls=files, record_activity=False)
    with RealtimeServer(config, whisper_backend) as server:
        base = f"https://localhost:{server.port}/v1"
        run = run_node_client(base, pcm_file, api_key=KEY, plain=False, extra_ca=files.cert)
        untrusted = run_node_client(base, pcm_file, api_key=KEY, plain=False)
    check(run)
    assert untrusted.returncode == 1 and not untrusted.events
    assert "certificate" in untrusted.stderr.lower(), untrusted.stderr

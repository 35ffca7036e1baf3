"""``POST /v1/audio/translations`` with the official ``openai`` SDK and curl, on the real model.

There is no non-English clip here, so the speech is declared French (``language=fr``, a
desktop-rt extension of the form): Whisper then transcribes it into French, and the translate
task must give the English words back (WER against the English reference). A model that cannot
translate (the real tiny GGUF backend) is refused with OpenAI's error JSON.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import openai
import pytest
from openai import OpenAI

from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from tests.support.clips import DATA, reference_text, wer

KEY = "sk-desktop-rt-translate"
CLIP = "ss-0870"
CLIP_PATH = DATA / f"{CLIP}.wav"
WER_BOUND = 0.15  # translated from "French" back to English (measured: 0.05)
FRENCH = {"language": "fr"}
CURL = shutil.which("curl")
# openai 3.x marks audio.translations.create deprecated; the endpoint is still OpenAI's API
pytestmark = pytest.mark.filterwarnings("ignore:deprecated:DeprecationWarning")


@pytest.fixture(scope="module")
def server(whisper_backend):
    config = ServerConfig(port=0, api_key=KEY, record_activity=False)
    with RealtimeServer(config, whisper_backend) as srv:
        yield srv


@pytest.fixture
def client(server) -> OpenAI:
    return OpenAI(api_key=KEY, base_url=f"{server.http_url}/v1", max_retries=0, timeout=120)


def test_sdk_json_is_english(client):
    with CLIP_PATH.open("rb") as audio:
        result = client.audio.translations.create(model="whisper-1", file=audio, extra_body=FRENCH)
    assert wer(reference_text(CLIP), result.text) <= WER_BOUND, result.text


def test_the_same_request_transcribed_is_not_english(client):
    """What makes the test above mean something: transcribing "French" speech gives French."""
    with CLIP_PATH.open("rb") as audio:
        result = client.audio.transcriptions.create(
            model="whisper-1", file=audio, extra_body=FRENCH
        )
    assert wer(reference_text(CLIP), result.text) > 0.5, result.text


def test_sdk_verbose_json_says_translate_and_english(client):
    with CLIP_PATH.open("rb") as audio:
        result = client.audio.translations.create(
            model="whisper-1", file=audio, response_format="verbose_json", extra_body=FRENCH
        )
    assert result.language == "english" and result.model_extra["task"] == "translate"
    assert 6.0 < result.duration < 8.0 and result.segments
    assert wer(reference_text(CLIP), result.text) <= WER_BOUND


@pytest.mark.parametrize("fmt", ["text", "srt", "vtt"])
def test_sdk_text_formats(client, fmt):
    with CLIP_PATH.open("rb") as audio:
        body = client.audio.translations.create(
            model="whisper-1", file=audio, response_format=fmt, extra_body=FRENCH
        )
    assert isinstance(body, str)
    if fmt == "srt":
        assert body.startswith("1\n00:00:0")
    elif fmt == "vtt":
        assert body.startswith("WEBVTT")
    lines = [ln for ln in body.splitlines() if ln and "-->" not in ln and not ln.isdigit()]
    assert wer(reference_text(CLIP), " ".join(lines).removeprefix("WEBVTT")) <= WER_BOUND


def test_sdk_unknown_model(client):
    with CLIP_PATH.open("rb") as audio, pytest.raises(openai.NotFoundError) as caught:
        client.audio.translations.create(model="no-such-model", file=audio)
    assert caught.value.code == "model_not_found"


def curl(server, *args: str) -> tuple[int, str]:
    assert CURL is not None, "curl is missing: scripts/install.sh installs it"
    out = subprocess.run(
        [CURL, "-sS", "-w", "\n%{http_code}", f"{server.http_url}/v1/audio/translations",
         "-H", f"Authorization: Bearer {KEY}", *args],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    body, _, status = out.stdout.rpartition("\n")
    return int(status), body


def test_curl(server):
    status, body = curl(server, "-F", f"file=@{CLIP_PATH}", "-F", "language=fr")
    assert status == 200, body
    assert wer(reference_text(CLIP), json.loads(body)["text"]) <= WER_BOUND


def test_curl_bad_format(server):
    status, body = curl(server, "-F", f"file=@{CLIP_PATH}", "-F", "response_format=mp3")
    error = json.loads(body)["error"]
    assert status == 400 and error["param"] == "response_format"


@pytest.fixture(scope="module")
def gguf_server(tmp_path_factory):
    """A server whose one model is the real (tiny, random-weight) GGUF backend."""
    from desktop_rt.engine.asr.llama.backend import LlamaAsrBackend, LlamaOptions
    from tests.support.tiny_qwen3asr import write_pair

    backend = LlamaAsrBackend(*write_pair(tmp_path_factory.mktemp("gguf")), LlamaOptions(threads=1))
    config = ServerConfig(port=0, api_key=KEY, record_activity=False, model_id="tiny-gguf")
    try:
        with RealtimeServer(config, backend) as srv:
            yield srv
    finally:
        backend.close()


@pytest.mark.slow
def test_a_model_that_cannot_translate_is_refused(gguf_server):
    client = OpenAI(api_key=KEY, base_url=f"{gguf_server.http_url}/v1", max_retries=0)
    with CLIP_PATH.open("rb") as audio, pytest.raises(openai.BadRequestError) as caught:
        client.audio.translations.create(model="tiny-gguf", file=audio)
    assert caught.value.code == "model_cannot_translate" and caught.value.param == "model"
    assert "cannot translate" in str(caught.value)
    with CLIP_PATH.open("rb") as audio:  # it still transcribes
        client.audio.transcriptions.create(model="tiny-gguf", file=audio)

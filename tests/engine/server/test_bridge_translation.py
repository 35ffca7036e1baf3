"""Live translation over real websockets on loopback, with the real model (engine/server/bridge.py).

No clip here is in another language, so the speech is declared French: Whisper then writes
its transcript in French, while the English stream must give the English words back (WER
against the English reference). A model that cannot translate (the real tiny GGUF backend)
refuses the option with ``invalid_value``.
"""

from __future__ import annotations

import pytest

from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from tests.support.clips import read_clip, reference_text
from tests.support.rt_client import COMPLETED, check_item_order, open_client, wer

TRANSLATION = "conversation.item.input_audio_transcription.translation"
WER_BOUND = 0.2  # streamed translation of a clean 7 s clip (measured: 0.05)


@pytest.fixture(scope="module")
def server(whisper_backend):
    with RealtimeServer(ServerConfig(port=0), whisper_backend) as srv:
        yield srv


async def test_a_translated_session_sends_english_beside_the_transcript(server):
    client = await open_client(server.url)
    updated = await client.configure(rate=24_000, language="fr", translate=True)
    assert updated["session"]["audio"]["input"]["transcription"]["translate"] is True
    await client.append_clip(read_clip("ss-0870"))
    await client.send({"type": "input_audio_buffer.commit", "final": True})
    assert await client.drain_to_close() == 1000  # after the English stream's last words too
    check_item_order(client.events)
    reference = reference_text("ss-0870")
    (original,) = client.transcripts()
    assert wer(reference, original) > 0.5, original  # the transcript is in French
    (done,) = client.of_type(f"{TRANSLATION}.completed")
    assert done["language"] == "en" and done["item_id"] == client.of_type(COMPLETED)[0]["item_id"]
    assert wer(reference, done["transcript"]) <= WER_BOUND, done["transcript"]
    deltas = client.of_type(f"{TRANSLATION}.delta")
    assert "".join(d["delta"] for d in deltas) == done["transcript"]
    assert not client.of_type("error")


async def test_without_the_option_nothing_is_translated(server):
    client = await open_client(server.url)
    updated = await client.configure(rate=24_000, language="en")
    assert "translate" not in updated["session"]["audio"]["input"]["transcription"]
    await client.append_clip(read_clip("beckett"))
    await client.send({"type": "input_audio_buffer.commit", "final": True})
    assert await client.drain_to_close() == 1000
    assert client.transcripts() and not [e for e in client.events if TRANSLATION in e["type"]]


async def test_turning_it_off_stops_the_english_stream_at_once(server):
    client = await open_client(server.url)
    await client.configure(rate=24_000, language="en", translate=True)
    clip = read_clip("beckett")
    await client.append_clip(clip[: len(clip) // 2])
    await client.configure(rate=24_000, translate=False)
    await client.append_clip(clip[len(clip) // 2 :])
    await client.send({"type": "input_audio_buffer.commit", "final": True})
    assert await client.drain_to_close() == 1000  # no English flush is awaited any more
    assert not client.of_type(f"{TRANSLATION}.completed")
    assert wer(reference_text("beckett"), "".join(client.transcripts())) <= 0.2


@pytest.fixture(scope="module")
def gguf_server(tmp_path_factory):
    from desktop_rt.engine.asr.llama.backend import LlamaAsrBackend, LlamaOptions
    from tests.support.tiny_qwen3asr import write_pair

    backend = LlamaAsrBackend(*write_pair(tmp_path_factory.mktemp("gguf")), LlamaOptions(threads=1))
    try:
        with RealtimeServer(ServerConfig(port=0, model_id="tiny-gguf"), backend) as srv:
            yield srv
    finally:
        backend.close()


@pytest.mark.slow
async def test_a_model_that_cannot_translate_refuses_the_option(gguf_server):
    client = await open_client(gguf_server.url)
    transcription = {"language": "en", "translate": True}
    await client.send(
        {"type": "session.update", "event_id": "evt_t", "session": {"type": "transcription",
         "audio": {"input": {"transcription": transcription}}}}
    )  # fmt: skip
    error = (await client.until("error"))["error"]
    assert error["code"] == "invalid_value" and error["event_id"] == "evt_t"
    assert error["param"] == "session.audio.input.transcription.translate"
    assert "cannot translate" in error["message"]
    updated = await client.configure(rate=24_000, language="en")  # the session goes on
    assert updated["session"]["audio"]["input"]["transcription"]["language"] == "en"
    await client.ws.close()

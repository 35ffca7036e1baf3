"""A turn decoded whole, over real websockets on loopback with the real model (bridge.py).

A 10 s push-to-talk hold is one item: its deltas stream as the words are agreed on, and its
``completed`` transcript is the item heard whole once the commit ended it, which must read as
offline recognition of the same audio does (issue 17: within 2 WER points of offline).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.file_transcriber import FileTranscriber
from desktop_rt.engine.asr.streaming import StreamingConfig
from desktop_rt.engine.protocol.events import TranscriptionCompleted
from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from tests.support.clips import read_clip, reference_text
from tests.support.learning_backend import LearningBackend
from tests.support.rt_client import COMPLETED, DELTA, check_item_order, open_client, wer

LOGPROBS = "item.input_audio_transcription.logprobs"
HOLD_PAD = np.zeros(4800, dtype=np.float32)  # 0.3 s held before and after the speech


@pytest.fixture(scope="module")
def server(whisper_backend):
    with RealtimeServer(ServerConfig(port=0), whisper_backend) as srv:
        yield srv


@pytest.mark.parametrize("name", ["beckett", "ss-0870"])
async def test_a_push_to_talk_turn_completes_as_offline_recognition_reads(
    server, whisper_backend, name
):
    audio = np.concatenate([HOLD_PAD, read_clip(name), HOLD_PAD])
    offline = FileTranscriber(whisper_backend).transcribe([audio]).text  # the same audio
    client = await open_client(server.url)
    heard = {"format": {"type": "audio/pcm", "rate": 24_000}, "transcription": {"language": "en"}}
    session = {"type": "transcription", "include": [LOGPROBS], "audio": {"input": heard}}
    await client.send({"type": "session.update", "session": session})
    await client.until("session.updated")
    await client.append_clip(audio)
    await client.send({"type": "input_audio_buffer.commit"})  # the key is released
    completed = await client.until(COMPLETED)
    await client.send({"type": "input_audio_buffer.commit", "final": True})
    await client.drain_to_close()
    check_item_order(client.events)
    assert len(client.of_type(COMPLETED)) == 1  # one hold, one turn
    reference = reference_text(name)
    transcript = completed["transcript"]
    assert wer(reference, transcript) <= wer(reference, offline) + 0.02, (transcript, offline)
    assert "".join(lp["token"] for lp in completed["logprobs"]) == transcript
    streamed = "".join(e["delta"] for e in client.of_type(DELTA))
    assert wer(reference, streamed) < 0.35, streamed  # the deltas came as they were agreed on
    assert not client.of_type("error")


class _WindowedBackend(LearningBackend):
    """Writes a fixed line, and declares Whisper's 30 s window so that turns can be heard whole."""

    traits = BackendTraits(window_seconds=30.0)


def _second_turn_unprompted(whole_turns: bool) -> int:
    """Passes without a prompt in a local session's second push-to-talk hold."""
    backend = _WindowedBackend("one two three four", {})
    # no context before a turn: a line written whatever the audio would be kept twice
    streaming = StreamingConfig(vad=False, turn_context_seconds=0.0)
    config = ServerConfig(port=0, record_activity=False, streaming=streaming)
    done = threading.Event()
    events: list[object] = []
    with RealtimeServer(config, backend) as server:
        local = server.open_local_session(
            events.append, emit_tentative=False, on_closed=done.set, whole_turns=whole_turns
        )
        for final in (False, True):  # two push-to-talk holds of 3 s each
            for _ in range(30):
                local.append(np.full(1600, 0.01, dtype=np.float32))
            local.commit(final=final)
        assert done.wait(60)
    completed = [e.transcript.strip() for e in events if isinstance(e, TranscriptionCompleted)]
    assert completed == ["one two three four"] * 2
    prompts = backend.prompts_seen()
    return prompts[next(i for i, p in enumerate(prompts) if p) :].count(None)


def test_a_local_session_without_whole_turns_hears_no_turn_again():
    """A meeting's microphone (``whole_turns=False``) is not decoded whole at its turns' ends.

    Streaming passes of a second turn are prompted with the first turn's words; a whole-turn
    decode is prompted with the user's prompt alone (none here), and so is a streaming pass
    heard again because it wrote its prompt's words (the second turn says the first again):
    whole turns add one pass without a prompt.
    """
    assert _second_turn_unprompted(True) == _second_turn_unprompted(False) + 1

"""StreamingTranscriber when speech stops: the next pass is the closing one, and a pause is
transcribed once and committed by the endpoint (a scripted backend, then the real model).
"""

from __future__ import annotations

import numpy as np
import pytest

from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from tests.support.clips import offline_text, read_clip, wer, words_of
from tests.support.streaming_feed import CHUNK, HypothesisScript


class _Recording:
    """Wraps a backend and notes the stream time of each call."""

    def __init__(self, backend, transcriber_ref: list):
        self.backend, self.ref, self.calls_at = backend, transcriber_ref, []
        self.traits, self.detected_language = backend.traits, None

    def transcribe(self, audio, *, prompt=None, language=None):
        self.calls_at.append(self.ref[0].audio_seconds)
        return self.backend.transcribe(audio, prompt=prompt, language=language)


class _LoudIsSpeech:
    """A speech gate for scripted audio: a frame is speech when it is loud."""

    def __call__(self, frame: np.ndarray) -> float:
        return 1.0 if float(np.abs(frame).max()) > 0.05 else 0.0

    def reset(self) -> None:
        pass


@pytest.mark.parametrize("hint, passes_at", [(0.25, [0.9, 1.4]), (None, [0.9, 1.2, 1.4])])
def test_once_speech_stops_the_next_pass_is_the_closing_one(hint, passes_at):
    ref: list = []
    recording = _Recording(HypothesisScript([[" hello", " world"]]), ref)
    tr = StreamingTranscriber(
        recording, StreamingConfig(pause_hint_seconds=hint), speech_probability=_LoudIsSpeech()
    )
    ref.append(tr)
    audio = np.concatenate(
        [np.full(14400, 0.1, dtype=np.float32), np.zeros(16000, dtype=np.float32)]
    )
    committed = []
    for i in range(0, len(audio), CHUNK):
        tr.insert_audio(audio[i : i + CHUNK])
        committed += tr.process().committed
    # Speech ends in the frame ending at 0.928 s. At 1.2 s, 0.27 s into the silence, a regular
    # pass would hear what the closing pass hears once the 0.4 s pad is in; with the hint it
    # waits for that one.
    assert recording.calls_at == pytest.approx(passes_at)
    assert "".join(w.text for w in committed) == " hello world"  # the endpoint committed it


def test_a_pause_is_transcribed_once_and_the_endpoint_commits_that(whisper_backend):
    clip = read_clip("ss-0880")
    audio = np.concatenate([clip, np.zeros(16000 * 2, dtype=np.float32)])
    ref: list = []
    recording = _Recording(whisper_backend, ref)
    tr = StreamingTranscriber(recording, StreamingConfig(language="en"))
    ref.append(tr)
    committed = []
    for i in range(0, len(audio), 1600):
        tr.insert_audio(audio[i : i + 1600])
        committed += tr.process().committed
    text = "".join(w.text for w in committed)
    # The clip once, as the model hears it whole: not twice, nothing lost.
    offline = offline_text(whisper_backend, clip, language="en")
    assert len(words_of(text)) == len(words_of(offline)), text
    assert wer(offline, text) <= 0.15, text  # one word of 8 may differ
    speech_end, cfg = tr._last_speech_end, tr.config
    assert tr.audio_seconds > speech_end + cfg.endpoint_silence_seconds
    assert tr._speech_start is None  # the endpoint closed the segment...
    # ...without a pass of its own: the last one ran once the pad after the speech was in.
    assert (
        speech_end + cfg.speech_pad_seconds
        <= recording.calls_at[-1]
        < speech_end + cfg.speech_pad_seconds + 0.11
    )

"""The Whisper backend on the real embedded model."""

from __future__ import annotations

import numpy as np

from tests.support.clips import librivox_stream, read_clip, reference_text, wer


def test_audio_longer_than_whisper_window_is_fully_transcribed(whisper_backend):
    joined, reference = librivox_stream()
    audio = np.concatenate([joined, read_clip("beckett")])  # ~37 s, past Whisper's 30 s
    words = whisper_backend.transcribe(audio, language="en")
    text = "".join(w.text for w in words)
    # Both parts, start to end (either one lost would cost over 0.1).
    assert wer(f"{reference} {reference_text('beckett')}", text) <= 0.1, text
    assert words[-1].end > 30.0
    starts = [w.start for w in words]
    assert starts == sorted(starts)


def test_silence_gives_no_words(whisper_backend):
    assert (
        list(whisper_backend.transcribe(np.zeros(16000 * 3, dtype=np.float32), language="en")) == []
    )


def test_the_detected_language_is_reported_only_when_detected(whisper_backend):
    audio = read_clip("ss-0880")
    whisper_backend.transcribe(audio)
    language, probability = whisper_backend.detected_language
    assert language == "en" and probability > 0.6
    whisper_backend.transcribe(audio, language="en")
    assert whisper_backend.detected_language is None

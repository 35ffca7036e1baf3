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


def test_quiet_speech_is_kept_as_it_is_heard_at_full_level(whisper_backend):
    """The silence tests drop no real words: each clip 30 dB down (short streaming-size
    windows and a whole one) reads within a word of the clip at full level."""
    for name in ["ss-0880", "beckett"]:
        audio, reference = read_clip(name), reference_text(name)
        quiet = (audio * 10 ** (-30 / 20)).astype(np.float32)
        for whole in (False, True):
            loud = "".join(w.text for w in whisper_backend.transcribe(audio, whole=whole))
            soft = "".join(w.text for w in whisper_backend.transcribe(quiet, whole=whole))
            assert soft.strip(), (name, whole)
            one_word = 1 / len(reference.split())
            assert wer(reference, soft) <= wer(reference, loud) + one_word + 1e-9, (soft, loud)


def test_a_whole_window_is_heard_with_whisper_full_context(default_model_dir):
    from desktop_rt.engine.asr.whisper import WhisperBackend, WhisperOptions

    fitted = WhisperBackend(default_model_dir, WhisperOptions(threads=1))
    full = WhisperBackend(default_model_dir, WhisperOptions(threads=1, context="full"))
    try:
        assert fitted.traits.whole_context
        for name in ["ss-0880", "beckett"]:
            audio = read_clip(name)
            assert fitted.transcribe(audio, whole=True) == full.transcribe(audio)
    finally:
        fitted.close()
        full.close()


def test_the_detected_language_is_reported_only_when_detected(whisper_backend):
    audio = read_clip("ss-0880")
    whisper_backend.transcribe(audio)
    language, probability = whisper_backend.detected_language
    assert language == "en" and probability > 0.6
    whisper_backend.transcribe(audio, language="en")
    assert whisper_backend.detected_language is None


def test_translate_writes_english_where_transcribe_writes_the_named_language(whisper_backend):
    """Told the speech is French, Whisper transcribes into French; the translate task gives
    the English words back (a multilingual model, so the traits say it can translate)."""
    assert whisper_backend.traits.can_translate
    audio, reference = read_clip("ss-0870"), reference_text("ss-0870")
    french = "".join(w.text for w in whisper_backend.transcribe(audio, language="fr"))
    english = whisper_backend.transcribe(audio, language="fr", task="translate")
    assert wer(reference, french) > 0.5, french
    assert wer(reference, "".join(w.text for w in english)) <= 0.15, english
    ends = [w.end for w in english]
    assert ends == sorted(ends) and ends[-1] <= len(audio) / 16000 + 0.5


def test_a_prompt_is_tokenized_once_not_on_every_pass(whisper_backend):
    """A long prompt (what issue 19 sent) costs one tokenization per distinct prompt."""
    audio = read_clip("beckett")[: 16000 * 3]
    prompt = "Samuel Beckett, Worstward Ho. " * 60
    before = whisper_backend.prompt_encodings
    for _ in range(3):
        whisper_backend.transcribe(audio, prompt=prompt, language="en")
    whisper_backend.transcribe(audio, prompt=prompt, language="en", task="translate")
    assert whisper_backend.prompt_encodings == before + 1
    whisper_backend.transcribe(audio, prompt=prompt + " Fail better.", language="en")
    assert whisper_backend.prompt_encodings == before + 2
    whisper_backend.transcribe(audio, prompt="   ", language="en")  # nothing to tokenize
    assert whisper_backend.prompt_encodings == before + 2

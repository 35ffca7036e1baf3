"""decoder_looped: a pass that repeats a phrase past the audio, or squeezed, looped."""

from __future__ import annotations

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.loops import decoder_looped

SENTENCE = "he was not an ill-disposed young man "


def words(text: str, step: float = 0.3, start: float = 0.0) -> list[Word]:
    return [
        Word(" " + t, start + i * step, start + i * step + step * 0.9, 1.0)
        for i, t in enumerate(text.split())
    ]


def test_a_phrase_written_on_past_the_audio_is_a_loop():
    assert decoder_looped(words("fail again " * 11), 4.0)
    assert decoder_looped(words("fail again. fail better. how do you measure? " * 4), 3.0)


def test_one_word_more_than_four_times_is_a_loop():
    assert decoder_looped(words("no " * 5), 3.0)
    assert not decoder_looped(words("no " * 4), 3.0)


def test_speech_that_repeats_itself_is_no_loop():
    assert not decoder_looped(words("ever tried ever failed fail again fail better"), 4.0)
    assert not decoder_looped(words("fail better fail better"), 4.0)  # twice is allowed
    assert not decoder_looped(words(SENTENCE * 2), 10.0)  # said twice, as long each time
    assert not decoder_looped([], 1.0)


def test_a_sentence_repeated_in_no_time_is_a_loop():
    squeezed = words(SENTENCE) + words(SENTENCE, step=0.05, start=2.1)
    assert decoder_looped(squeezed, 10.0)

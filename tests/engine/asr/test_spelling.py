"""Word confidence summed over the spellings agreement treats as one word."""

from __future__ import annotations

import numpy as np
import pytest

from desktop_rt.engine.asr.spelling import SpellingFolder, word_probabilities
from desktop_rt.engine.asr.spelling import normalize_word as spelling_key
from desktop_rt.engine.asr.whisper import WhisperBackend, WhisperOptions
from tests.support.clips import librivox_stream

VOCAB = [" And", " and", "And", " Mr", ".", ",", " John", "Dash", "wood"]


def _folder() -> SpellingFolder:
    return SpellingFolder(lambda t: VOCAB[t], len(VOCAB))


def test_spelling_key_ignores_case_spaces_and_punctuation():
    assert spelling_key(" And") == spelling_key("and,") == "and"
    assert spelling_key(" Mr.") == "mr"
    assert spelling_key("...") == ""


def test_a_step_probability_counts_every_spelling_of_the_chosen_token():
    scores = np.log(np.array([0.41, 0.13, 0.06, 0.3, 0.04, 0.02, 0.02, 0.01, 0.01]))
    folder = _folder()
    assert folder.probability(scores, 0) == pytest.approx(0.60)  # " And" + " and" + "And"
    assert folder.probability(scores, 3) == pytest.approx(0.30)  # " Mr" has no other spelling
    assert folder.probability(scores, 4) == pytest.approx(0.06)  # "." and "," are both punctuation


def test_each_word_takes_its_least_sure_word_token_and_ignores_punctuation():
    tokens = [(" And", 0.6), (" Mr", 0.8), (".", 0.1), (" Dash", 0.7), ("wood", 0.99)]
    assert word_probabilities([" And", " Mr.", " Dashwood"], tokens) == [0.6, 0.8, 0.7]
    assert word_probabilities(["..."], [(".", 0.3), ("..", 0.5)]) == [
        0.3
    ]  # only punctuation: it counts


def test_tokens_that_do_not_spell_the_words_change_nothing():
    assert word_probabilities([" And", " Mr."], [(" And", 0.6), (" Mr", 0.8)]) == [None, None]


def test_whisper_words_carry_the_folded_decoding_probability(whisper_backend, default_model_dir):
    audio, _ = librivox_stream()
    window = audio[: int(1.5 * 16000)]  # "And Mr. John Dash..." where Whisper splits And/and
    folded = whisper_backend.transcribe(window, language="en")
    aligned = WhisperBackend(default_model_dir, WhisperOptions(word_probability="alignment"))
    try:
        plain = aligned.transcribe(window, language="en")
    finally:
        aligned.close()
    assert [w.text for w in folded] == [w.text for w in plain]  # the same words and times
    assert [(w.start, w.end) for w in folded] == [(w.start, w.end) for w in plain]
    assert all(0.0 < w.probability <= 1.0 for w in folded)
    # The window opens on "And", where Whisper splits its mass between " And" and " and": the
    # sum is what agreement compares.
    assert folded[0].probability > plain[0].probability + 0.1, (folded[0], plain[0])


def test_spelling_key_is_the_form_hypotheses_are_compared_in():
    from desktop_rt.engine.asr.spelling import normalize_word

    for text in [" And", "and,", " Mr.", " it's", " Dash-wood", "...", " Ölfass", "'"]:
        assert spelling_key(text) == normalize_word(text)

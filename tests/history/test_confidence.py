"""Word probabilities aligned to the cleaned text, and their JSON form."""

from __future__ import annotations

from desktop_rt.history.confidence import (
    decode_probabilities,
    encode_probabilities,
    is_uncertain,
    word_probabilities,
)
from desktop_rt.history.speech_text import clean_speech_text


def test_each_word_gets_the_lowest_probability_of_its_tokens():
    tokens = [("Hello", 0.9), (" wor", 0.8), ("ld,", 0.4), (" you", 0.95)]
    assert word_probabilities(tokens, "Hello world, you") == (0.9, 0.4, 0.95)


def test_words_of_cleaned_text_keep_their_own_probabilities():
    tokens = [(" [MUSIC]", 0.2), (" It", 0.7), (" is", 0.99), (" (laughs)", 0.1), (" on.", 0.6)]
    raw = "".join(t for t, _ in tokens)
    cleaned = clean_speech_text(raw)
    assert cleaned.split() == ["It", "is", "on."]
    assert word_probabilities(tokens, cleaned) == (0.7, 0.99, 0.6)


def test_words_not_in_the_tokens_are_unknown_and_never_uncertain():
    assert word_probabilities([(" a", 0.1)], "a typed") == (0.1, None)
    assert word_probabilities([], "") == ()
    assert is_uncertain(0.1, 0.5) and not is_uncertain(0.5, 0.5)
    assert not is_uncertain(None, 0.5)


def test_probabilities_round_trip_as_json_and_bad_json_reads_as_nothing():
    stored = encode_probabilities([0.12345, None, float("nan"), 1.0])
    assert decode_probabilities(stored) == (0.123, None, None, 1.0)
    for bad in (None, "", "{", '{"a": 1}', '[true, "x"]'):
        assert decode_probabilities(bad) in ((), (None, None))


def test_repeated_words_each_take_their_own_tokens():
    tokens = [(" the", 0.9), (" the", 0.2), (" end.", 0.6)]
    assert word_probabilities(tokens, "the the end.") == (0.9, 0.2, 0.6)

"""The non-speech filter: sound tags and punctuation runs go, words stay (property-tested)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_rt.history.speech_text import clean_speech_text, is_non_speech

WORD = st.from_regex(r"[A-Za-z][a-z']{0,8}[.,?!]?", fullmatch=True)
TAG = st.sampled_from(
    ["[MUSIC]", "(breath)", "[ Silence ]", "(upbeat music)", "*laughs*", "♪ la la ♪"]
)
JUNK = st.from_regex(r"_{2,12}|[.\-=~!?]{4,9}|(- ){2,4}-", fullmatch=True)
TEXT = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=60)


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        (" Hello [MUSIC] there.", " Hello there."),
        ("________________", ""),
        (" (breath)", ""),
        (" The", " The"),
        ("Ever tried. Ever failed.", "Ever tried. Ever failed."),
        (" So... well!!!! ok", " So... well ok"),
        (" it's 5 - 3 = 2 ", " it's 5 - 3 2 "),
        (" I was going [MUS", " I was going"),
        ("♪ ♪", ""),
    ],
)
def test_examples(raw, clean):
    assert clean_speech_text(raw) == clean


@settings(max_examples=300, deadline=None)
@given(st.lists(WORD, min_size=1, max_size=12), st.booleans())
def test_plain_words_pass_unchanged(words, lead):
    text = (" " if lead else "") + " ".join(words)
    assert clean_speech_text(text) == text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(WORD, TAG, JUNK), max_size=14))
def test_tags_and_junk_are_removed_and_words_kept_in_order(pieces):
    words = [p for p in pieces if any(c.isalpha() for c in p) and p[0] not in "[(*♪"]
    assert clean_speech_text(" ".join(pieces)).split() == words


@settings(max_examples=500, deadline=None)
@given(TEXT)
def test_idempotent_and_free_of_brackets_and_underscore_runs(text):
    once = clean_speech_text(text)
    assert clean_speech_text(once) == once
    assert not any(c in once for c in "[](){}<>♪♫*")
    assert "__" not in once
    assert is_non_speech(text) == (once.strip() == "")
    for token in once.split():
        assert any(c.isalnum() for c in token) or token in set("-–—&%$€£+")

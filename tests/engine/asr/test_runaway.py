"""drop_runaway: how many repeats each phrase length keeps, and the speaking-rate cap."""

from __future__ import annotations

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.runaway import MAX_WORDS_PER_SECOND, drop_runaway


def words(text: str, step: float = 0.1) -> list[Word]:
    return [Word(" " + t, i * step, i * step + step * 0.9) for i, t in enumerate(text.split())]


def kept(text: str, duration: float = 60.0) -> str:
    return " ".join(w.text.strip() for w in drop_runaway(words(text), duration))


def test_one_word_is_kept_four_times_in_a_row():
    assert kept("no " * 4) == "no no no no"
    assert kept("no " * 9 + "yes") == "no no no no yes"


def test_a_short_phrase_is_kept_twice_and_a_long_one_once():
    assert kept("fail better " * 5) == "fail better fail better"
    long = "he might even have been made amiable"
    assert kept(f"{long} {long} {long}") == long


def test_words_past_a_speaking_rate_are_dropped():
    many = " ".join(f"w{i}" for i in range(40))
    assert len(drop_runaway(words(many, step=0.02), duration=1.0)) == int(MAX_WORDS_PER_SECOND) + 4

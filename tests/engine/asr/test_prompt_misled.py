"""prompt_misled: a pass its committed-text prompt led astray (words from the 10 dB stream)."""

from __future__ import annotations

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.prompt_misled import (
    copied_phrases,
    prompt_copy,
    prompt_misled,
    says_again,
)


def timed(*spec: tuple[str, float, float]) -> list[Word]:
    return [Word(text if text.startswith("-") else " " + text, s, e) for text, s, e in spec]


BEFORE = (
    "after the tone say your busy message and then press the pound key. play back of the list "
    "of people attending is complete. the conference will begin when the leader arrives."
)
# The 10 dB stream at 562.6 s, a 3.5 s window over "I am sorry, there is no call parked", given
# BEFORE as its prompt: its times look heard.
COPY = timed(
    ("the", 1.14, 1.60),
    ("conference", 1.60, 1.88),
    ("will", 1.88, 2.10),
    ("begin", 2.10, 2.40),
    ("when", 2.40, 2.70),
    ("the", 2.70, 3.06),
    ("leader", 3.06, 3.44),
    ("arrives.", 3.44, 3.46),
)


def test_a_sentence_written_again_from_the_prompt_is_a_copy():
    assert prompt_copy(COPY, BEFORE) == set(range(len(COPY)))
    assert prompt_misled(COPY, BEFORE, speech_seconds=3.1)


def test_only_the_copied_run_is_the_copy():
    # the real-time run committed "the the conference will begin when the"
    words = timed(("the", 0.0, 0.3), *((w.text.strip(), w.start, w.end) for w in COPY[:6]))
    assert prompt_copy(words, BEFORE) == set(range(1, 7))


def test_three_words_in_a_row_inside_a_longer_hypothesis_are_not_a_copy():
    words = timed(
        ("Please", 0.0, 0.3),
        ("enter", 0.3, 0.6),
        ("your", 0.6, 0.8),
        ("agent", 0.8, 1.1),
        ("number", 1.1, 1.4),
        ("followed", 1.4, 1.7),
        ("by", 1.7, 1.8),
        ("the", 1.8, 1.9),
        ("pound", 1.9, 2.2),
        ("key.", 2.2, 2.5),
    )
    assert not prompt_copy(words, BEFORE)  # "the pound key" alone
    assert not prompt_misled(words, BEFORE, speech_seconds=2.5)


def test_a_whole_hypothesis_of_three_words_the_prompt_has_is_a_copy():
    prompt = "That is not a valid password. Please try again. To mute or unmute yourself."
    words = timed(("Please", 0.1, 0.4), ("try", 0.4, 0.7), ("again.", 0.7, 1.0))
    assert prompt_copy(words, prompt) == {0, 1, 2}
    assert not prompt_copy(words[:2], prompt)  # two words: too few to tell


def test_a_written_word_is_compared_whole():
    prompt = "He was an ill-disposed man, and he was not"
    words = timed(("an", 0.0, 0.2), ("ill", 0.2, 0.5), ("-disposed", 0.5, 0.9), ("man,", 0.9, 1.2))
    words += timed(("and", 1.2, 1.4))
    assert prompt_copy(words, prompt) == {0, 1, 2, 3, 4}
    assert not prompt_copy(words[:3] + timed(("woman,", 0.9, 1.2)), prompt)


def test_nothing_over_seconds_of_speech_is_the_prompt_s_doing_and_nothing_else_is():
    assert prompt_misled([], BEFORE, speech_seconds=2.4)
    assert not prompt_misled([], BEFORE, speech_seconds=1.0)  # an onset: Whisper waits
    assert not prompt_misled([], None, speech_seconds=5.0)
    assert not prompt_misled(COPY, None, speech_seconds=3.1)  # no prompt, nothing to copy


def test_a_phrase_the_speech_was_heard_to_say_again_is_no_copy():
    said = copied_phrases(COPY, BEFORE)  # a pass without the prompt wrote it too
    assert ("the", "conference", "will", "begin") in said
    assert not prompt_copy(COPY, BEFORE, said)
    assert not prompt_misled(COPY, BEFORE, 3.1, said)
    other = timed(("play", 0.0, 0.3), ("back", 0.3, 0.5), ("of", 0.5, 0.6), ("the", 0.6, 0.7))
    assert prompt_copy(other, BEFORE, said) == {0, 1, 2, 3}  # another phrase still is


def test_a_pass_without_the_prompt_says_a_copied_phrase_again_a_word_aside():
    phrases = {("and", "mister", "john", "dashwud")}
    spelled = timed(("and", 0, 1), ("mister", 1, 2), ("John", 2, 3), ("Dashwood", 3, 4))
    assert says_again(spelled, phrases)  # one word of four spelled otherwise
    other = timed(("and", 0, 1), ("sister", 1, 2), ("Joan", 2, 3), ("Dashwood", 3, 4))
    assert not says_again(other, phrases)
    assert says_again(
        timed(("please", 0, 1), ("try", 1, 2), ("again", 2, 3)), {("please", "try", "again")}
    )
    assert not says_again(
        timed(("please", 0, 1), ("try", 1, 2), ("it", 2, 3)), {("please", "try", "again")}
    )


def test_a_longer_run_over_a_phrase_said_again_is_no_copy():
    said = {("when", "the", "leader")}  # heard again on a shorter window
    assert not prompt_copy(COPY[3:], BEFORE, said)  # "begin when the leader arrives."
    assert prompt_copy(COPY, BEFORE, said) == {0, 1, 2, 3, 4, 5}  # "the conference will begin"…

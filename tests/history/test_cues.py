"""Cue splitting of desktop_rt.history.cues: examples from real sessions and properties."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_rt.core_types import Word
from desktop_rt.history.cues import (
    ABBREVIATIONS,
    LINE_CHARS,
    MAX_CUE_SECONDS,
    MAX_LINES,
    MIN_CUE_SECONDS,
    SUBTITLES,
    CueLimits,
    cue_seconds,
    cue_text,
    ends_sentence,
    is_abbreviation,
    split_cues,
    wrap_lines,
)


def words_of(text: str, start: float = 0.0, step: float = 0.3) -> list[Word]:
    """Evenly timed words, each with the leading space the tokenizer keeps."""
    return [
        Word(f" {t}", start + i * step, start + (i + 1) * step, 0.9)
        for i, t in enumerate(text.split())
    ]


def texts(cues: list[tuple[Word, ...]]) -> list[str]:
    return [cue_text(c) for c in cues]


def assert_within_limits(cue: tuple[Word, ...], limits: CueLimits = SUBTITLES) -> None:
    """At most two lines of 42 characters and 7 s, unless one word alone is longer."""
    if len(cue) == 1:
        return
    lines = wrap_lines(cue_text(cue), limits.line_chars)
    assert len(lines) <= limits.max_lines, lines
    assert all(len(line) <= limits.line_chars for line in lines), lines
    assert cue_seconds(cue) <= limits.max_seconds


# --- examples ---------------------------------------------------------------------------------


def test_limits_follow_subtitle_guidelines():
    assert (LINE_CHARS, MAX_LINES, MAX_CUE_SECONDS) == (42, 2, 7.0)
    assert 0.8 <= MIN_CUE_SECONDS <= 1.0


def test_abbreviations_are_not_sentence_ends():
    for word in ["Mr.", "Mrs.", "Dr.", "St.", "e.g.", "i.e.", "etc.", '"Mr.', "(e.g."]:
        assert is_abbreviation(word) and not ends_sentence(word), word
    for word in ["there.", "Mr", "Mr?", "was.", "etc,", "Mister."]:
        assert not is_abbreviation(word), word
    assert ends_sentence("there.") and ends_sentence('said."') and not ends_sentence("Mr")
    assert {"mr", "mrs", "dr", "st", "e.g", "i.e", "etc"} <= ABBREVIATIONS


def test_mr_does_not_become_a_cue_of_its_own():
    cues = split_cues(words_of("He said that he would come. And Mr. Darcy was there at last."))
    assert "And Mr." not in texts(cues)
    assert not any(is_abbreviation(c[-1].text) for c in cues)
    assert "And Mr. Darcy was there at last." in texts(cues)


def test_no_listed_abbreviation_ends_a_cue():
    text = "We met Dr. Smith and Mrs. Jones on St. James street, e.g. at noon, i.e. early, etc. and so on."
    cues = split_cues(words_of(text))
    assert " ".join(texts(cues)) == text
    assert not any(is_abbreviation(c[-1].text) for c in cues)


def test_a_long_sentence_is_split_evenly_with_no_short_tail():
    sentence = (
        "She had always believed that a man in possession of a good fortune would use the "
        "power to do for them."
    )
    cues = split_cues(words_of(sentence, step=0.35))
    assert len(cues) == 2 and " ".join(texts(cues)) == sentence
    lengths = [len(t) for t in texts(cues)]
    assert abs(lengths[0] - lengths[1]) <= 12, texts(cues)
    assert all(cue_seconds(c) >= 2.0 for c in cues)


def test_a_short_sentence_tail_joins_the_previous_cue():
    words = words_of("He looked at the fire for a long time, taller", step=0.4)
    words += words_of("than he was.", start=words[-1].end, step=0.25)  # 0.75 s
    cues = split_cues(words)
    assert texts(cues) == ["He looked at the fire for a long time, taller than he was."]


def test_a_short_sentence_joins_a_neighbour_even_across_a_sentence_end():
    cues = split_cues(words_of("It rained all day long in the town. Fine!", step=0.3))
    assert texts(cues) == ["It rained all day long in the town. Fine!"]


def test_a_cue_that_would_need_three_lines_is_split():
    text = "Their correspondence was uncharacteristically straightforward, entirely respectable"
    assert len(text) <= 84 and len(wrap_lines(text)) == 3  # one 84-character cue would not fit
    cues = split_cues(words_of(text, step=0.3))
    assert " ".join(texts(cues)) == text and len(cues) == 2
    for cue in cues:
        assert_within_limits(cue)


def test_a_turn_shorter_than_the_minimum_is_one_cue():
    cues = split_cues(words_of("Yes.", step=0.3))
    assert texts(cues) == ["Yes."]
    assert split_cues([]) == [] and split_cues([Word(" ", 0, 1)]) == []


def test_one_overlong_word_is_a_cue_of_its_own():
    long = "x" * 60
    cues = split_cues([Word(" a", 0, 1), Word(f" {long}", 1, 2), Word(" b", 2, 3)])
    assert [long] in [[cue_text(c)] for c in cues]
    assert " ".join(texts(cues)) == f"a {long} b"


# --- properties -------------------------------------------------------------------------------

_VOCABULARY = [
    "the", "a", "power", "respectable", "extraordinarily", "them.", "was.", "Fine!",
    "really?", "said,", "Mr.", "Mrs.", "Dr.", "e.g.", "etc.", "x" * 45, '"stop."', "…",
]  # fmt: skip
_tokens = st.one_of(st.sampled_from(_VOCABULARY), st.text("abcdefghij", min_size=1, max_size=14))


@st.composite
def word_sequences(draw, abbreviation_followed_by_name: bool = False) -> list[Word]:
    """Time-ordered, non-overlapping words with random lengths, pauses and punctuation."""
    t = draw(st.floats(0, 1000, allow_nan=False))
    words = []
    for token in draw(st.lists(_tokens, max_size=60)):
        t += draw(st.sampled_from([0.0, 0.0, 0.05, 0.3, 1.0, 2.5]))
        length = draw(st.floats(0.0, 2.0, allow_nan=False))
        words.append(Word(f" {token}", t, t + length))
        t += length
        if abbreviation_followed_by_name and is_abbreviation(token):
            words.append(Word(" Darcy", t, t + length))
            t += length
    return words


def _pair_can_be_mended(
    first: tuple[Word, ...], second: tuple[Word, ...], limits: CueLimits
) -> bool:
    """Brute force: the two cues could be one cue, or two cues neither of them short (and not
    cut after an abbreviation) within the limits."""
    pair = first + second
    if _fits(pair, limits):
        return True
    for k in range(1, len(pair)):
        a, b = pair[:k], pair[k:]
        whole = all(_fits(p, limits) and cue_seconds(p) >= limits.min_seconds for p in (a, b))
        if whole and not is_abbreviation(a[-1].text):
            return True
    return False


def _fits(cue: tuple[Word, ...], limits: CueLimits) -> bool:
    try:
        assert_within_limits(cue, limits)
    except AssertionError:
        return False
    return len(cue_text(cue)) <= limits.max_chars


@settings(max_examples=300, deadline=None)
@given(word_sequences())
def test_every_word_once_in_order_and_cues_within_the_limits(words):
    cues = split_cues(words)
    assert [w for cue in cues for w in cue] == [w for w in words if w.text.strip()]
    for cue in cues:
        assert cue and _fits(cue, SUBTITLES) or len(cue) == 1


@settings(max_examples=300, deadline=None)
@given(word_sequences())
def test_no_short_cue_that_a_neighbour_could_take(words):
    cues = split_cues(words)
    for k, cue in enumerate(cues):
        if cue_seconds(cue) >= MIN_CUE_SECONDS:
            continue
        if k > 0:
            assert not _pair_can_be_mended(cues[k - 1], cue, SUBTITLES), texts(cues)
        if k + 1 < len(cues):
            assert not _pair_can_be_mended(cue, cues[k + 1], SUBTITLES), texts(cues)


@settings(max_examples=300, deadline=None)
@given(word_sequences())
def test_cue_times_lie_within_their_words_and_never_overlap(words):
    cues = split_cues(words)
    for cue in cues:
        start, end = cue[0].start, cue[0].start + cue_seconds(cue)
        assert min(w.start for w in cue) >= start and max(w.end for w in cue) <= end + 1e-9
    for before, after in zip(cues, cues[1:], strict=False):
        assert before[0].start + cue_seconds(before) <= after[0].start + 1e-9


@settings(max_examples=300, deadline=None)
@given(word_sequences(abbreviation_followed_by_name=True))
def test_abbreviations_end_a_cue_only_where_the_next_word_cannot_join(words):
    limits = CueLimits(min_seconds=0.0)
    cues = split_cues(words, limits)
    for cue, following in zip(cues, cues[1:], strict=False):
        if is_abbreviation(cue[-1].text):
            paused = following[0].start - cue[-1].end > limits.max_gap
            assert paused or not _fits(cue + following[:1], limits), texts(cues)

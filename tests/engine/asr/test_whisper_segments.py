"""Cutting Whisper's decoded tokens into segments, and reading words back; no model needed."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.whisper_segments import (
    TimedSegment,
    WordTiming,
    looks_hallucinated,
    segment_words,
    split_at_timestamps,
)

TB = 100  # the first timestamp token (<|0.00|>) of these made-up vocabularies
STEP = 0.02  # seconds per timestamp token


def spans(segments: list[TimedSegment]) -> list[tuple[float, float, list[int]]]:
    return [(s["start"], s["end"], s["tokens"]) for s in segments]


def test_segments_end_at_pairs_of_timestamps_and_an_unfinished_tail_is_dropped():
    tokens = [TB, 5, 6, TB + 50, TB + 50, 7, TB + 80, TB + 80, 8, 9]
    assert spans(split_at_timestamps(tokens, TB, STEP, 30.0)) == [
        (0.0, 1.0, [TB, 5, 6, TB + 50]),
        (1.0, 1.6, [TB + 50, 7, TB + 80]),
    ]


def test_a_lone_timestamp_at_the_end_closes_the_last_segment():
    tokens = [TB, 5, TB + 50, TB + 50, 6, TB + 90]
    assert spans(split_at_timestamps(tokens, TB, STEP, 30.0)) == [
        (0.0, 1.0, [TB, 5, TB + 50]),
        (1.0, 1.8, [TB + 50, 6, TB + 90]),
    ]


@pytest.mark.parametrize(
    "tokens, end",
    [
        ([TB, 5, 6, TB + 40], 0.8),  # one segment up to its last timestamp
        ([5, 6], 7.5),  # no timestamp: the whole window
        ([TB, 5, 6, TB], 7.5),  # only <|0.00|>: the whole window
        ([], 7.5),
    ],
)
def test_without_a_pair_the_window_is_one_segment(tokens, end):
    assert spans(split_at_timestamps(tokens, TB, STEP, 7.5)) == [(0.0, end, tokens)]
    assert split_at_timestamps(tokens, TB, STEP, 7.5)[0]["seek"] == 0


def test_the_same_cuts_as_faster_whisper_makes():
    """faster-whisper 1.2.1's own (private) splitter, when it is still there, on random
    sequences of text and timestamp tokens."""
    from faster_whisper.transcribe import WhisperModel

    theirs = getattr(WhisperModel, "_split_segments_by_timestamps", None)
    assert theirs is not None, "the pinned faster-whisper lost the splitter this test compares with"
    model = SimpleNamespace(time_precision=STEP, input_stride=2)
    tokenizer = SimpleNamespace(timestamp_begin=TB)
    rng = random.Random(7)
    for _ in range(2000):
        tokens = [
            rng.choice([rng.randrange(TB), TB + rng.randrange(40)])
            for _ in range(rng.randrange(12))
        ]
        expected, _seek, _single = theirs(
            model,
            tokenizer=tokenizer,
            tokens=tokens,
            time_offset=0.0,
            segment_size=3000,
            segment_duration=30.0,
            seek=0,
        )
        assert split_at_timestamps(tokens, TB, STEP, 30.0) == expected, tokens


VOCAB = {1: " Hello", 2: ",", 3: " world", 4: ".", 5: " again"}
EOT = 50


def decode(ids: list[int]) -> str:
    return "".join(VOCAB[i] for i in ids if i < EOT)


def aligned(tokens: list[int], words: list[WordTiming], start: float, end: float) -> TimedSegment:
    return TimedSegment(seek=0, start=start, end=end, tokens=tokens, words=words)


def timing(word: str, start: float, end: float, probability: float) -> WordTiming:
    return WordTiming(word=word, start=start, end=end, probability=probability)


def test_words_take_decodings_probability_when_folded_and_the_alignments_otherwise():
    tokens = [EOT + 1, 1, 2, 3, 4, EOT + 1 + 9, EOT + 1 + 9, 5, EOT + 1 + 20]
    first = aligned(
        tokens[:6], [timing(" Hello,", 0.0, 0.1, 0.5), timing(" world.", 0.1, 0.18, 0.6)], 0, 0.18
    )
    second = aligned(tokens[6:], [timing(" again", 0.18, 0.4, 0.7)], 0.18, 0.4)
    folded = {1: 0.9, 2: 0.2, 3: 0.8, 4: 0.3, 7: 0.4}
    words = segment_words([first, second], EOT, decode, tokens, folded)
    # punctuation tokens do not count towards a word's probability
    assert [(w.text, w.start, w.end, w.probability) for w in words] == [
        (" Hello,", 0.0, 0.1, 0.9),
        (" world.", 0.1, 0.18, 0.8),
        (" again", 0.18, 0.4, 0.4),
    ]
    plain = segment_words([first, second], EOT, decode, tokens, {})
    assert [w.probability for w in plain] == [0.5, 0.6, 0.7]


def test_empty_and_zero_length_segments_and_blank_words_give_no_words():
    tokens = [EOT + 1, 1, EOT + 1, EOT + 1, EOT + 3, EOT + 3, 3, EOT + 9]
    zero = aligned(tokens[:3], [timing(" Hello", 0.0, 0.0, 0.9)], 0.0, 0.0)
    blank = aligned(tokens[3:5], [], 0.0, 0.04)
    spaced = aligned(
        tokens[5:], [timing(" ", 0.04, 0.05, 0.9), timing(" world", 0.05, 0.16, 0.8)], 0.04, 0.16
    )
    words = segment_words([zero, blank, spaced], EOT, decode, tokens, {1: 0.5, 6: 0.6})
    # " " gives no word; with it the words do not spell the tokens: the alignment's probability
    assert [(w.text, w.probability) for w in words] == [(" world", 0.8)]


def test_a_lone_unsure_word_looks_hallucinated_and_a_sure_one_does_not():
    assert looks_hallucinated([Word(" you", 1.58, 2.28, 0.11)])
    assert not looks_hallucinated([Word(" you", 1.58, 2.28, 0.6)])
    assert not looks_hallucinated([])


def test_speech_with_an_unsure_word_among_sure_ones_does_not_look_hallucinated():
    words = [Word(f" w{i}", i * 0.4, i * 0.4 + 0.3, 0.9) for i in range(5)]
    words[2] = Word(" w2", 0.8, 1.1, 0.05)
    assert not looks_hallucinated(words)
    assert looks_hallucinated([Word(f" w{i}", i * 0.4, i * 0.4 + 0.3, 0.1) for i in range(5)])


def test_too_short_and_too_long_words_count_as_unsure_and_punctuation_does_not_count():
    assert looks_hallucinated([Word(" a", 0.0, 0.01, 0.9)])  # (0.133 - 0.01) * 15 > 1
    assert looks_hallucinated([Word(" so", 0.0, 4.5, 0.9), Word(" yes", 5.0, 5.3, 0.9)])
    assert looks_hallucinated([Word(" you", 1.0, 1.6, 0.1), Word(".", 1.6, 1.6, 0.9)])
    assert not looks_hallucinated([Word(".", 1.6, 1.6, 0.01)])

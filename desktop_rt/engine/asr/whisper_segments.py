"""A decoded Whisper window's tokens, cut into segments and read back as words.

Call order (see :mod:`~desktop_rt.engine.asr.whisper`): :func:`split_at_timestamps` on the
tokens of one decoding pass; faster-whisper's word alignment fills each segment's ``words``;
:func:`segment_words` turns them into :class:`~desktop_rt.core_types.Word`. Pure functions over
token ids: nothing here loads or calls a model. :func:`looks_hallucinated` is
openai-whisper's test for words written over silence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NotRequired, TypedDict

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.spelling import word_probabilities

__all__ = [
    "WordTiming",
    "TimedSegment",
    "looks_hallucinated",
    "split_at_timestamps",
    "segment_words",
]

# openai-whisper's word anomaly score (transcribe.py, hallucination_silence_threshold)
_PUNCTUATION = "\"'“¿([{-\"'.。,，!！?？:：”)]}、"
_UNSURE = 0.15  # a word less probable than this scores 1
_SHORTEST = 0.133  # seconds; a shorter word scores (0.133 - duration) * 15
_LONGEST = 2.0  # seconds; a longer word scores duration - 2
_WORDS_SCORED = 8


class WordTiming(TypedDict):
    """A word as faster-whisper's word alignment reports it."""

    word: str
    start: float
    end: float
    probability: float


class TimedSegment(TypedDict):
    """A run of decoded tokens between timestamp tokens, in faster-whisper's segment shape."""

    seek: int  # mel frame the window starts at (always 0 here)
    start: float  # seconds from the window's start
    end: float
    tokens: list[int]  # the run, its timestamp tokens included
    words: NotRequired[list[WordTiming]]  # filled in by word alignment


def split_at_timestamps(
    tokens: Sequence[int], timestamp_begin: int, time_precision: float, duration: float
) -> list[TimedSegment]:
    """Cut a decoded window's tokens into segments at its timestamp tokens.

    Tokens ``>= timestamp_begin`` are timestamps, ``time_precision`` seconds apart. A segment
    ends where two timestamps follow each other (the second starts the next segment); a
    sequence ending in one lone timestamp also ends a segment there, and any unfinished tail
    after the last pair is dropped. With no pair, the whole sequence is one segment from 0 to
    its last timestamp (``duration`` when there is none, or only ``<|0.00|>``). This is what
    faster-whisper's transcription loop does with one window at offset 0.
    """
    cuts = [
        i
        for i in range(1, len(tokens))
        if tokens[i] >= timestamp_begin and tokens[i - 1] >= timestamp_begin
    ]
    if not cuts:
        stamps = [t for t in tokens if t >= timestamp_begin]
        if stamps and stamps[-1] != timestamp_begin:
            duration = (stamps[-1] - timestamp_begin) * time_precision
        return [TimedSegment(seek=0, start=0.0, end=duration, tokens=list(tokens))]
    if len(tokens) >= 2 and tokens[-2] < timestamp_begin <= tokens[-1]:
        cuts.append(len(tokens))
    segments = []
    # Each run goes from the previous cut to the next; the first from 0 (one start more).
    for first, end in zip([0, *cuts], cuts, strict=False):
        run = list(tokens[first:end])
        start = (run[0] - timestamp_begin) * time_precision
        stop = (run[-1] - timestamp_begin) * time_precision
        segments.append(TimedSegment(seek=0, start=start, end=stop, tokens=run))
    return segments


def segment_words(
    segments: Sequence[TimedSegment],
    eot: int,
    decode: Callable[[list[int]], str],
    tokens: list[int],
    folded: dict[int, float],
) -> list[Word]:
    """The words of aligned segments, in order.

    ``eot``: the first non-text token id; ``decode``: token ids to text; ``tokens``: the whole
    decoded sequence the segments were cut from. With ``folded`` (step in ``tokens`` -> folded
    probability of the token chosen there) a word's probability is decoding's, else (or when
    the tokens do not spell the words) the alignment's. Empty and zero-length segments give none.
    """
    words: list[Word] = []
    cursor = 0
    for seg in segments:
        text_tokens = [t for t in seg["tokens"] if t < eot]
        steps = None
        if folded:
            steps, cursor = _steps_of(tokens, text_tokens, cursor)
        if seg["start"] == seg["end"] or not decode(seg["tokens"]).strip():
            continue
        spelled = None
        if steps is not None:
            spelled = [(decode([t]), folded[i]) for t, i in zip(text_tokens, steps, strict=True)]
        words += _aligned_words(seg, spelled)
    return words


def _aligned_words(seg: TimedSegment, spelled: list[tuple[str, float]] | None) -> list[Word]:
    """The segment's aligned words; ``spelled``: its text tokens with folded probabilities."""
    timings = [w for w in seg.get("words") or () if w["word"]]
    probs: list[float | None] = [None] * len(timings)
    if spelled is not None:
        probs = word_probabilities([w["word"] for w in timings], spelled)
    return [
        Word(
            w["word"],
            float(w["start"]),
            float(w["end"]),
            float(w["probability"]) if p is None else p,
        )
        for w, p in zip(timings, probs, strict=True)
        if w["word"].strip()
    ]


def _steps_of(sequence: list[int], run: list[int], cursor: int) -> tuple[list[int] | None, int]:
    """Where ``run`` occurs contiguously in ``sequence`` at or after ``cursor``: its step indices."""
    n = len(run)
    for start in range(cursor, len(sequence) - n + 1):
        if sequence[start : start + n] == run:
            return list(range(start, start + n)), start + n
    return None, cursor


def looks_hallucinated(words: Sequence[Word]) -> bool:
    """Whether ``words`` (one decoding's) look written over silence, not heard: openai-whisper's
    segment anomaly test. Each of the first 8 words that is not punctuation scores 1 when its
    probability is under 0.15, more when it is shorter than 0.133 s or longer than 2 s; the
    words look hallucinated when they score 3, or about one per word. No words: False."""
    scored = [w for w in words if w.text.strip() not in _PUNCTUATION][:_WORDS_SCORED]
    if not scored:
        return False
    score = sum(_anomaly(w) for w in scored)
    return score >= 3 or score + 0.01 >= len(scored)


def _anomaly(word: Word) -> float:
    duration = word.end - word.start
    score = 1.0 if word.probability < _UNSURE else 0.0
    if duration < _SHORTEST:
        score += (_SHORTEST - duration) * 15
    if duration > _LONGEST:
        score += duration - _LONGEST
    return score

"""Whether a decoder looped on a pass: :func:`decoder_looped`.

Pure function over one pass's words as the backend wrote them, window-relative (before
:func:`~.runaway.drop_runaway` cleans them). A pass that looped went astray, and what survives
the cleaning is no evidence for agreement (docs/design/streaming.md, *Evidence*).
"""

from __future__ import annotations

from collections.abc import Sequence

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.spelling import normalize_word

__all__ = ["decoder_looped"]

_LONGEST_PHRASE = 16  # as drop_runaway looks for loops
_PAST_END = 0.02  # a word starting this close to the window's end lies after it


def _repeat_limit(n: int) -> int:
    """How many times in a row a phrase of ``n`` words may be said (as ``drop_runaway``)."""
    return 4 if n == 1 else 2 if n <= 6 else 1


def _span(words: Sequence[Word]) -> float:
    return words[-1].end - words[0].start


def _unspoken(words: Sequence[Word], n: int, i: int, duration: float) -> bool:
    """Whether the saying of a phrase of ``n`` words ending at ``words[i]`` was not spoken:
    one word said yet again, or a phrase past the window's end or in under half the time its
    saying before took (a speaker who repeats a sentence takes as long each time)."""
    said, before = words[i - n + 1 : i + 1], words[i - 2 * n + 1 : i - n + 1]
    return n == 1 or said[0].start >= duration - _PAST_END or _span(said) < _span(before) / 2


def decoder_looped(words: Sequence[Word], duration: float) -> bool:
    """Whether ``words`` (heard on a window of ``duration`` seconds) say one phrase more times
    in a row than :func:`_repeat_limit` allows, the extra saying unspoken (:func:`_unspoken`):
    "Fail again." eleven times, "How do you measure?" eight times past the audio's end.

    A phrase of ``n`` words said ``k + 1`` times in a row makes ``n * k`` words in a row equal
    to the word ``n`` before them.
    """
    norm = [normalize_word(w.text) for w in words]
    for n in range(1, min(_LONGEST_PHRASE, len(norm) // 2) + 1):
        need, run = n * _repeat_limit(n), 0
        for i in range(n, len(norm)):
            run = run + 1 if norm[i] == norm[i - n] and norm[i] else 0
            if run >= need and (run - need) % n == 0 and _unspoken(words, n, i, duration):
                return True
    return False

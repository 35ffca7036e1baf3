"""Cleaning one pass's words of what a looping decoder invents: :func:`drop_runaway`.

Pure function over window-relative words; the streaming engine applies it to every pass.
"""

from __future__ import annotations

from collections.abc import Sequence

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.spelling import normalize_word

__all__ = ["MAX_WORDS_PER_SECOND", "drop_runaway"]

MAX_WORDS_PER_SECOND = 7.0
"""Fast speech is 4-5 words a second; more is a decoder loop."""

_LOOP_WORDS = 16  # the longest phrase a loop is looked for in
_PAST_END = 0.02  # a word starting this close to the window's end lies after it


def _repeat_limit(n: int) -> int:
    """How many times in a row a phrase of ``n`` words is kept before a repeat is a loop."""
    return 4 if n == 1 else 2 if n <= 6 else 1


def _loop_length(norm: list[str], i: int, out_norm: list[str]) -> int:
    """The length of the phrase starting at ``norm[i]`` that loops over ``out_norm``'s tail, or 0."""
    for n in range(_LOOP_WORDS, 0, -1):
        limit = _repeat_limit(n)
        if (
            len(out_norm) >= n * limit
            and norm[i : i + n] == out_norm[-n:]
            and all(
                out_norm[-n * (k + 1) : len(out_norm) - n * k] == out_norm[-n:]
                for k in range(limit)
            )
        ):
            return n
    return 0


def drop_runaway(words: Sequence[Word], duration: float) -> list[Word]:
    """Remove what a decoder invents when it loops, keeping real speech.

    Whisper on a short or noisy window can repeat a phrase until its token limit ("Fail better.
    Fail better. ..."), or place words after the audio ends. Dropped: words starting past the
    end of the window; a phrase of 7-16 words said twice in a row (a loop over the whole
    sentence: "He might even have been made amiable himself. He might even ..."), of 2-6 words
    more than twice, or one word more than four times in a row (kept once, twice, resp. four
    times); anything past a rate no speaker reaches.
    """
    kept = [w for w in words if w.start < duration - _PAST_END]
    norm = [normalize_word(w.text) for w in kept]
    out: list[Word] = []
    out_norm: list[str] = []
    i = 0
    while i < len(kept):
        loop = _loop_length(norm, i, out_norm)
        if loop:
            i += loop
            continue
        out.append(kept[i])
        out_norm.append(norm[i])
        i += 1
    return out[: int(MAX_WORDS_PER_SECOND * duration) + 4]

"""Which words of a hypothesis are committed words heard again: :func:`heard_again`.

Pure functions over words in stream time, for :class:`~.agreement.HypothesisBuffer`. A window
still holds the audio of words committed before, and a pass over it hears them again, perhaps
misheard, split or merged, and with times a decoder's alignment moves by tenths of a second;
the words after them are new. Telling the two apart by time alone loses or repeats words; here
the text decides where it can, the times where it must.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import accumulate

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.spelling import normalize_word

__all__ = ["heard_again", "written_past"]

_AGAIN_SECONDS = 1.0  # a committed word heard again ends this close to where it was committed
_BEFORE_COMMIT = 0.1  # a word ending this long before the commit point is an old one
_PENDING_WORDS = 3  # tentative words that tell the words after the commit point from old ones
_LEADING_MARKS = re.compile(r"^[^\w']+")


def heard_again(
    held: Sequence[Word],
    words: Sequence[Word],
    commit_point: float,
    pending: Sequence[Word] = (),
    window_start: float = 0.0,
) -> int:
    """How many leading ``words`` (a hypothesis) are the committed words ``held`` heard again.

    ``held`` are matched to ``words`` in order by :func:`normalize_word`, each to a word that
    ends within ``_AGAIN_SECONDS`` of it, as early in ``words`` as a longest matching allows.
    While a committed word after the last match is left unmatched (one whose middle the window
    holds), the words with their middle before the commit point are it heard otherwise
    (misheard, or written as more or fewer words), unless one is among the next ``pending``
    (tentative) words or writes the last committed word and the next. Any word ending
    ``_BEFORE_COMMIT`` before the commit point is an old one too.
    """
    candidates = [w for w in words if w.end <= commit_point + _AGAIN_SECONDS]
    last_held, last_word = _last_match(held, candidates)
    unmatched = any(_middle(w) > window_start for w in held[last_held + 1 :])
    coming = {normalize_word(w.text) for w in pending[:_PENDING_WORDS]}
    last = normalize_word(_last_written(held).text)
    split = last_word + 1
    while split < len(words):
        word = words[split]
        key = normalize_word(word.text)
        misheard = (
            unmatched
            and _middle(word) <= commit_point
            and key not in coming
            and not (_over(key, last) and word.end > commit_point + _BEFORE_COMMIT)
        )
        if not (misheard or word.end <= commit_point - _BEFORE_COMMIT):
            break
        split += 1
    return split


def _over(key: str, head: str) -> bool:
    """Whether a word (``key``) writes the word ``head`` and more."""
    return bool(head) and len(key) > len(head) and key.startswith(head)


def _last_written(words: Sequence[Word]) -> Word:
    """The last written word of ``words``, its pieces ("ill" + "-disposed") joined."""
    first = len(words) - 1
    while first > 0 and not words[first].text[:1].isspace():
        first -= 1
    pieces = words[max(first, 0) :]
    if not pieces:
        return Word("", 0.0, 0.0)
    return Word("".join(w.text for w in pieces), pieces[0].start, pieces[-1].end)


def _middle(word: Word) -> float:
    return (word.start + word.end) / 2


def _last_match(held: Sequence[Word], words: Sequence[Word]) -> tuple[int, int]:
    """The last pair ``(i, j)`` of a longest in-order matching of ``held[i]`` to ``words[j]``
    (same normalized text, ends within ``_AGAIN_SECONDS``) taking each match as early as it
    can; ``(-1, -1)`` if nothing matches."""
    pairs = _matching_pairs(held, words)
    if not pairs:
        return (-1, -1)
    n, m = len(held), len(words)
    best = _match_table(pairs, n, m)  # best[i][j]: matches within held[i:], words[j:]
    i = j = 0
    last = (-1, -1)
    while i < n and j < m and best[i][j]:
        if j in pairs.get(i, ()) and best[i][j] == best[i + 1][j + 1] + 1:
            last, i, j = (i, j), i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return last


def _matching_pairs(held: Sequence[Word], words: Sequence[Word]) -> dict[int, set[int]]:
    """``i -> {j}``: where ``held[i]`` may match ``words[j]`` (same non-empty normalized text,
    ends within ``_AGAIN_SECONDS``); rows with no match are left out."""
    at: dict[str, list[int]] = {}
    for j, w in enumerate(words):
        at.setdefault(normalize_word(w.text), []).append(j)
    pairs: dict[int, set[int]] = {}
    for i, h in enumerate(held):
        key = normalize_word(h.text)
        near = {j for j in at.get(key, ()) if abs(words[j].end - h.end) <= _AGAIN_SECONDS}
        if key and near:
            pairs[i] = near
    return pairs


def _match_table(pairs: dict[int, set[int]], n: int, m: int) -> list[list[int]]:
    """The longest-matching table: ``best[i][j] = max(best[i + 1][j], best[i][j + 1],
    best[i + 1][j + 1] + 1 where held[i] matches words[j])``, with a zero last row and column.

    Each row never grows with ``j``, so it is the running maximum, from the right, of the row
    below raised at the matches: one C-level pass per row (a row without a match is the one
    below)."""
    below = [0] * (m + 1)
    best = [below]
    for i in range(n - 1, -1, -1):
        matches = pairs.get(i)
        if matches:
            raised = below[:]
            for j in matches:
                raised[j] = max(raised[j], below[j + 1] + 1)
            below = list(accumulate(reversed(raised), max))[::-1]
        best.append(below)
    best.reverse()
    return best


def written_past(word: Word, committed: Sequence[Word], pending: Sequence[Word]) -> Word:
    """``word``, or its part after the commit point when it writes the last ``committed``
    word and the next one as one ("someone" over "some" + "one"): when it starts by the middle
    of the committed word and ends well after it, or is it and the first ``pending`` word."""
    last = _last_written(committed)
    head, key = normalize_word(last.text), normalize_word(word.text)
    nxt = normalize_word(pending[0].text) if pending else ""
    over = word.start <= _middle(last) and word.end > last.end + _BEFORE_COMMIT and _over(key, head)
    if not (head and (over or (nxt and key == head + nxt))):
        return word
    kept = 0
    for i, ch in enumerate(word.text):
        kept += bool(normalize_word(ch))
        if kept == len(head):
            text = _LEADING_MARKS.sub("", word.text[i + 1 :])
            return Word(text, last.end, word.end, word.probability)
    return word

"""How sure a decoder was of a word, counting every way of spelling the same word.

Agreement compares words by :func:`normalize_word` ("And" agrees with "and"), so the confidence
it weighs must count the same way: a decoder's probability for the token it chose splits the
mass between spellings. :class:`SpellingFolder` sums a step's probabilities over the tokens that
spell the same thing once case, spaces and punctuation are set aside, and
:func:`word_probabilities` gives each word the lowest such probability among its tokens
(punctuation tokens do not count: agreement ignores punctuation too). Where this matters:
docs/design/streaming.md, *Segment onsets*.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["SpellingFolder", "word_probabilities", "normalize_word"]

_NOT_WORD = re.compile(r"[^\w']+", re.UNICODE)


def normalize_word(text: str) -> str:
    """The form two hypotheses are compared in: lower case, no punctuation, no spaces.

    Apostrophes stay ("its" and "it's" are different words). Tokens are grouped by it too.
    """
    return _NOT_WORD.sub("", text).lower()


class SpellingFolder:
    """Groups a vocabulary's tokens by :func:`normalize_word`; built once per tokenizer."""

    def __init__(self, decode: Callable[[int], str], vocab_size: int):
        keys: dict[str, int] = {}
        self._group = np.empty(vocab_size, dtype=np.int64)
        for token in range(vocab_size):
            self._group[token] = keys.setdefault(normalize_word(decode(token)), len(keys))
        order = np.argsort(self._group, kind="stable")
        bounds = np.searchsorted(self._group[order], np.arange(len(keys) + 1))
        self._members = [order[bounds[g] : bounds[g + 1]] for g in range(len(keys))]

    def probability(self, log_probs: np.ndarray, token: int) -> float:
        """P(the step's token spells what ``token`` spells), from one step's scores over the vocabulary."""
        scores = np.asarray(log_probs, dtype=np.float64).reshape(-1)
        top = scores.max()
        weights = np.exp(scores - top)
        members = self._members[self._group[token]]
        members = members[members < weights.size]
        return float(weights[members].sum() / weights.sum())


def word_probabilities(
    words: Sequence[str], tokens: Sequence[tuple[str, float]]
) -> list[float | None]:
    """For each word, the lowest folded probability of the word-bearing tokens that spell it.

    ``tokens`` are ``(text, probability)`` in order and must spell exactly ``"".join(words)``;
    when they do not (a token that is half a UTF-8 character, say) every word gets None and
    the caller keeps the probability it had.
    """
    if "".join(words) != "".join(text for text, _ in tokens):
        return [None] * len(words)
    spans: list[tuple[int, int, float, bool]] = []
    at = 0
    for text, p in tokens:
        spans.append((at, at + len(text), p, bool(normalize_word(text))))
        at += len(text)
    out: list[float | None] = []
    at = 0
    for word in words:
        end = at + len(word)
        inside = [(p, wordy) for s, e, p, wordy in spans if s < end and e > at]
        probs = [p for p, wordy in inside if wordy] or [p for p, _ in inside]
        out.append(min(probs) if probs else None)
        at = end
    return out

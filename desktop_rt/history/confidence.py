"""How sure the recognizer was of each shown word: aligned to the cleaned text, saved as JSON.

The recognizer's words arrive as ``(token, probability)`` pairs whose tokens, joined, spell the
raw text; what is shown and saved is that text cleaned
(:func:`~desktop_rt.history.speech_text.clean_speech_text`), which drops tags but never changes a
word. :func:`word_probabilities` gives each word of the cleaned text (split on whitespace) the
lowest probability of the tokens it spans, None where it cannot be found or no token it spans
has one (a token's probability may be None: unknown). The history keeps them
as JSON (:func:`encode_probabilities`, :func:`decode_probabilities`); a word is shaded in the
captions when :func:`is_uncertain`. Pure functions.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

__all__ = ["word_probabilities", "is_uncertain", "encode_probabilities", "decode_probabilities"]


def word_probabilities(
    tokens: Sequence[tuple[str, float | None]], text: str
) -> tuple[float | None, ...]:
    """One probability per word of ``text`` (see the module docstring)."""
    raw = "".join(token for token, _ in tokens)
    spans: list[tuple[int, int, float | None]] = []
    position = 0
    for token, probability in tokens:
        spans.append((position, position + len(token), probability))
        position += len(token)
    found: list[float | None] = []
    cursor = first = 0  # both only move forward: linear in the text and the tokens
    for word in text.split():
        at = raw.find(word, cursor)
        if at < 0:
            found.append(None)
            continue
        end = at + len(word)
        while first < len(spans) and spans[first][1] <= at:
            first += 1
        covering: list[float] = []
        k = first
        while k < len(spans) and spans[k][0] < end:
            probability = spans[k][2]
            if probability is not None:
                covering.append(probability)
            k += 1
        found.append(min(covering) if covering else None)
        cursor = end
    return tuple(found)


def is_uncertain(probability: float | None, threshold: float) -> bool:
    """A word the recognizer gave less than ``threshold`` (an unknown one never is)."""
    return probability is not None and probability < threshold


def encode_probabilities(probabilities: Sequence[float | None]) -> str:
    """The JSON the history keeps (three decimals; unknown or not finite as null)."""
    return json.dumps(
        [round(p, 3) if p is not None and math.isfinite(p) else None for p in probabilities],
        separators=(",", ":"),
    )


def decode_probabilities(stored: str | None) -> tuple[float | None, ...]:
    """What :func:`encode_probabilities` wrote; () for nothing saved or anything unreadable."""
    if not stored:
        return ()
    try:
        values = json.loads(stored)
    except ValueError:
        return ()
    if not isinstance(values, list):
        return ()
    return tuple(
        float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None
        for v in values
    )

"""Non-speech text taken out of recognizer output before it is shown, saved or exported.

Models trained on subtitles print sound tags and filler when they hear no words: bracketed tags
(``[MUSIC]``, ``(breath)``, ``*laughs*``, ``♪ … ♪``) and runs of punctuation or underscores
(``____``, ``- - -``, ``!!!!``). :func:`clean_speech_text` removes those, and a tag still being
typed at the end (``[MUS``), and tidies the spaces left; words, and the punctuation attached to
them, stay as they are. One space at either end is kept when there was one, so pieces of a turn
(committed words, then tentative ones) still join with a space. Pure functions; idempotent.
"""

from __future__ import annotations

import re

__all__ = ["clean_speech_text", "is_non_speech"]

_TAGS = re.compile(r"\[[^\[\]]*\]|\([^()]*\)|\{[^{}]*\}|<[^<>]*>|\*[^*\s][^*]*\*|[♪♫][^♪♫]*[♪♫]")
_OPEN_TAG = re.compile(r"[\[({<*♪♫][^\])}>*♪♫]*$")  # a tag still being written, at the end
_RUNS = re.compile(r"_+|[^\w\s'’]*([^\w\s'’])\1{3,}[^\w\s'’]*")  # underscores; four or more of one
# punctuation mark, with the marks glued to them ("====-")
_LONE = frozenset("-–—&%$€£+")  # a token of one of these stands on its own in speech
_BRACKETS = str.maketrans("", "", "[](){}<>♪♫*")


def _words(body: str) -> list[str]:
    """Tokens with a letter or digit, and lone symbols standing between them (not in runs)."""
    tokens = [t for t in body.split() if any(c.isalnum() for c in t) or t in _LONE]
    lone = [not any(c.isalnum() for c in t) for t in tokens]
    return [
        t
        for i, t in enumerate(tokens)
        if not lone[i] or not ((i > 0 and lone[i - 1]) or (i + 1 < len(tokens) and lone[i + 1]))
    ]


def clean_speech_text(text: str) -> str:
    """``text`` without non-speech tags and punctuation runs (see the module docstring)."""
    if not text:
        return text
    body = _TAGS.sub(" ", text)
    body = _OPEN_TAG.sub(" ", body)
    body = _RUNS.sub(" ", body).translate(_BRACKETS)
    words = _words(body)
    if not words:
        return ""
    lead = " " if text[:1].isspace() else ""
    tail = " " if text[-1:].isspace() else ""
    return lead + " ".join(words) + tail


def is_non_speech(text: str) -> bool:
    """Nothing speech-like in ``text`` (empty once cleaned)."""
    return not clean_speech_text(text).strip()

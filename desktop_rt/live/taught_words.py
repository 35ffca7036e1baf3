"""Words the user taught a live session by correcting its captions.

:func:`changed_words` compares a recognised line with the user's correction of it and returns the
words the user wrote new or differently (punctuation at a word's edges is not a change; a word the
recognised line already had is not new). :class:`TaughtWords` keeps such words for the rest of a
session, each once (taught again, it moves to the newest end, in its newest spelling), bounded:
the newest ``max_words`` whose list fits ``max_chars``. :meth:`TaughtWords.session_update` is the
``session.update`` that sets them as the session's keywords, which the model is prompted with
(:attr:`~desktop_rt.engine.protocol.session_config.SessionConfig.model_prompt`), so a name
corrected once is spelled that way from then on. No I/O, no threads: the owner calls it.
"""

from __future__ import annotations

import difflib
import re

from desktop_rt.engine.protocol.events import SessionUpdate
from desktop_rt.engine.protocol.session_config import MAX_KEYWORDS, SessionPatch

__all__ = ["TaughtWords", "changed_words"]

MAX_WORD_CHARS = 40
"""A longer "word" (a pasted URL, a run of letters) teaches nothing."""
_EDGE = re.compile(r"^[^\w]+|[^\w]+$")


def _word(piece: str) -> str:
    """``piece`` without the punctuation at its edges: ``"Dashwood's,"`` -> ``"Dashwood's"``."""
    return _EDGE.sub("", piece)


def changed_words(recognised: str, corrected: str) -> list[str]:
    """The words of ``corrected`` that the user wrote new or changed, in order, each once."""
    old = [w for w in map(_word, recognised.split()) if w]
    new = [w for w in map(_word, corrected.split()) if w]
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    known = set(old)
    out: list[str] = []
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag not in ("replace", "insert"):
            continue
        for word in new[j1:j2]:
            if word not in known and word not in out and len(word) <= MAX_WORD_CHARS:
                out.append(word)
    return out


class TaughtWords:
    """See the module docstring. ``words``: oldest first."""

    def __init__(self, max_words: int = 24, max_chars: int = 200):
        self.max_words = max(1, min(max_words, MAX_KEYWORDS))
        self.max_chars = max_chars
        self._words: dict[str, str] = {}  # lower case -> the spelling taught last (newest last)

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self._words.values())

    def teach(self, recognised: str, corrected: str) -> bool:
        """Keep the words ``corrected`` changed in ``recognised``; True if the list changed."""
        before = self.words
        for word in changed_words(recognised, corrected):
            self._words.pop(word.lower(), None)
            self._words[word.lower()] = word
        while len(self._words) > self.max_words or len(", ".join(self.words)) > self.max_chars:
            del self._words[next(iter(self._words))]  # the oldest goes first
        return self.words != before

    def session_update(self) -> SessionUpdate:
        """The ``session.update`` that makes these words the session's keywords."""
        return SessionUpdate(SessionPatch(keywords=self.words))

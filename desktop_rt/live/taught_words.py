"""Words the user taught a live session by correcting its captions.

:func:`changed_words` compares a recognised line with the user's correction of it and returns the
words the user wrote new or differently (punctuation at a word's edges is not a change; a word the
recognised line already had is not new); :func:`changed_spellings` the words the user wrote
differently, old -> new (word by word where as many words replace as many, else a stretch of at
most three words each way; never a reordering).
:class:`TaughtWords` keeps such words for the rest of a session, each once (taught again, it moves
to the newest end, in its newest spelling), bounded: the newest ``max_words`` whose list fits
``max_chars``, and as many of the newest respellings. :meth:`TaughtWords.session_update` is the
``session.update`` that sets them as the session's keywords, which the model is prompted with
(:attr:`~desktop_rt.engine.protocol.session_config.SessionConfig.model_prompt`), and its
respellings, which the committed text that prompt is built from takes (so Whisper, which copies
the nearer context, reads the new spelling there too): a name corrected once is spelled that way
from then on. No I/O, no threads: the owner calls it.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Sequence

from desktop_rt.engine.protocol.events import Respelling, SessionUpdate
from desktop_rt.engine.protocol.fields import MAX_NAME_BYTES
from desktop_rt.engine.protocol.session_config import MAX_KEYWORDS, SessionPatch

__all__ = ["TaughtWords", "changed_spellings", "changed_words"]

MAX_WORD_CHARS = 40
"""A longer "word" (a pasted URL, a run of letters) teaches nothing."""
MAX_RESPELL_WORDS = 3
"""A longer changed stretch is the user rewriting the line, not respelling a word."""
_EDGE = re.compile(r"^[^\w]+|[^\w]+$")
_LEAD, _TRAIL = re.compile(r"^[^\w]*"), re.compile(r"[^\w]*$")


def _word(piece: str) -> str:
    """``piece`` without the punctuation at its edges: ``"Dashwood's,"`` -> ``"Dashwood's"``."""
    return _EDGE.sub("", piece)


def _words(text: str) -> list[str]:
    return [w for w in map(_word, text.split()) if w]


def _pieces(text: str) -> list[str]:
    """The pieces of ``text`` :func:`_words` makes words of, with their punctuation."""
    return [p for p in text.split() if _word(p)]


def _opcodes(old: list[str], new: list[str]) -> Sequence[tuple[str, int, int, int, int]]:
    return difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()


def changed_words(recognised: str, corrected: str) -> list[str]:
    """The words of ``corrected`` that the user wrote new or changed, in order, each once."""
    old, new = _words(recognised), _words(corrected)
    known = set(old)
    out: list[str] = []
    for tag, _i1, _i2, j1, j2 in _opcodes(old, new):
        if tag not in ("replace", "insert"):
            continue
        for word in new[j1:j2]:
            if word not in known and word not in out and len(word) <= MAX_WORD_CHARS:
                out.append(word)
    return out


def changed_spellings(recognised: str, corrected: str) -> list[Respelling]:
    """The stretches of ``recognised`` that ``corrected`` writes differently, in order: a
    replacement of words by as many, word by word, or of at most :data:`MAX_RESPELL_WORDS` words
    by at most as many; none of whose words the other line has (a word moved is not respelled),
    each short enough for the protocol. Punctuation both sides have at an edge is left out
    ("Dashwud," -> "Dashwood," respells "Dashwud"); punctuation one side has is kept ("Mr." ->
    "Mister" respells "Mr.", whose period is the abbreviation's)."""
    old, new = _words(recognised), _words(corrected)
    old_pieces, new_pieces = _pieces(recognised), _pieces(corrected)
    out: list[Respelling] = []
    for tag, i1, i2, j1, j2 in _opcodes(old, new):
        if tag != "replace" or set(old[i1:i2]) & set(new) or set(new[j1:j2]) & set(old):
            continue
        before, after = old_pieces[i1:i2], new_pieces[j1:j2]
        if len(before) == len(after):
            pairs = [([b], [a]) for b, a in zip(before, after, strict=True)]
        elif max(len(before), len(after)) <= MAX_RESPELL_WORDS:
            pairs = [(before, after)]
        else:
            continue
        texts = [_unpunctuated(" ".join(b), " ".join(a)) for b, a in pairs]
        out += [Respelling(*t) for t in texts if max(map(_size, t)) <= MAX_NAME_BYTES]
    return out


def _unpunctuated(old: str, new: str) -> tuple[str, str]:
    """``old`` and ``new`` less the punctuation they both have at their start and end."""
    lead = len(os.path.commonprefix([_match(_LEAD, old), _match(_LEAD, new)]))
    trail = len(os.path.commonprefix([_match(_TRAIL, old)[::-1], _match(_TRAIL, new)[::-1]]))
    return old[lead : len(old) - trail], new[lead : len(new) - trail]


def _match(pattern: re.Pattern[str], text: str) -> str:
    found = pattern.search(text)
    return found.group(0) if found else ""


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


class TaughtWords:
    """See the module docstring. ``words``: oldest first."""

    def __init__(self, max_words: int = 24, max_chars: int = 200):
        self.max_words = max(1, min(max_words, MAX_KEYWORDS))
        self.max_chars = max_chars
        self._words: dict[str, str] = {}  # lower case -> the spelling taught last (newest last)
        self._respellings: dict[str, Respelling] = {}  # old, lower case -> newest (newest last)

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self._words.values())

    @property
    def respellings(self) -> tuple[Respelling, ...]:
        """Oldest first, as the recognizer applies them."""
        return tuple(self._respellings.values())

    def teach(self, recognised: str, corrected: str) -> bool:
        """Keep the words ``corrected`` changed in ``recognised`` and their respellings; True
        if either list changed."""
        before = (self.words, self.respellings)
        for word in changed_words(recognised, corrected):
            self._words.pop(word.lower(), None)
            self._words[word.lower()] = word
        while len(self._words) > self.max_words or len(", ".join(self.words)) > self.max_chars:
            del self._words[next(iter(self._words))]  # the oldest goes first
        for respelling in changed_spellings(recognised, corrected):
            key = respelling.old.lower()
            if key in self._respellings and self._respellings[key].new == respelling.new:
                continue  # known already (its old word in any case): it stays as it is
            self._respellings.pop(key, None)
            self._respellings.pop(respelling.new.lower(), None)  # no longer to be undone
            self._respellings[key] = respelling
        while len(self._respellings) > self.max_words:
            del self._respellings[next(iter(self._respellings))]
        return (self.words, self.respellings) != before

    def session_update(self) -> SessionUpdate:
        """The ``session.update`` that makes these words the session's keywords, and these
        respellings its committed text's."""
        return SessionUpdate(SessionPatch(keywords=self.words, respellings=self.respellings))

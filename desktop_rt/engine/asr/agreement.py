"""LocalAgreement over successive hypotheses of a growing window: :class:`HypothesisBuffer`.

Call order: :meth:`~HypothesisBuffer.insert` each pass's words (in stream time); at a segment's
end :meth:`~HypothesisBuffer.commit` its final pass, or :meth:`~HypothesisBuffer.commit_tentative`
when nothing followed the last one; :meth:`~HypothesisBuffer.clear` drops what is pending.
Invariant: nothing emitted twice, nothing heard lost. Every word of a hypothesis that is not
already committed comes back from that call once, committed or in the tentative tail; a
committed word never comes back again (a later hypothesis's words before the commit point, or
repeating the committed tail there, are dropped as already committed).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.spelling import normalize_word

__all__ = ["HypothesisBuffer", "OnsetRule", "StreamUpdate", "whole_words"]

_CONTEXT_WORDS = 64  # committed words remembered (prompt, forced prefix, repeat checks)
_REPEAT_WORDS = 16  # how far back a hypothesis may repeat the committed words
_REPEAT_GAP = 1.0  # a repeat of the committed tail starting this close after it is heard again
_COMMIT_SLACK = 0.1  # a word starting this close before the commit point is a committed one


@dataclass(frozen=True)
class StreamUpdate:
    """What one call produced: words committed by it, and the whole current tentative tail."""

    committed: tuple[Word, ...] = ()
    tentative: tuple[Word, ...] = ()

    @property
    def committed_text(self) -> str:
        return "".join(w.text for w in self.committed)

    @property
    def tentative_text(self) -> str:
        return "".join(w.text for w in self.tentative)


@dataclass(frozen=True)
class OnsetRule:
    """The stricter agreement an onset hypothesis (heard on a short window) needs.

    ``hypotheses`` latest hypotheses (at least 2) must agree on a word, each giving it at least
    ``min_probability``, and the newest at least ``latest_probability`` (``None``: the same).
    """

    hypotheses: int = 2
    min_probability: float = 0.5
    latest_probability: float | None = 0.6

    @property
    def latest_floor(self) -> float:
        if self.latest_probability is None:
            return self.min_probability
        return self.latest_probability


def whole_words(words: Sequence[Word], n: int) -> int:
    """The longest prefix of ``words[:n]`` that ends at a written word's end.

    A word whose text does not start with a space continues the one before it ("ill" +
    "-disposed"): agreeing on its first half must not commit that half alone.
    """
    while 0 < n < len(words) and not words[n].text[:1].isspace():
        n -= 1
    return n


class HypothesisBuffer:
    """Commits the words the latest hypotheses agree on; holds the rest as tentative.

    Two hypotheses agree on a word when it sits at the same place in both after the committed
    words are set aside, compared by :func:`normalize_word`; the longest agreed prefix (cut back
    to a whole written word) is committed. An onset hypothesis, or the one after it, needs the
    :class:`OnsetRule`. A word is taken as committed when it starts over 0.1 s before the
    commit point, or repeats the committed tail right after it; so the invariant holds for
    words longer than that, whose times are stable to within it from pass to pass. With
    ``forces_prefix`` the backend was given the committed words and returns only what follows
    them, so words are not dropped by time, only as a repeated tail.
    """

    def __init__(self, *, forces_prefix: bool = False, onset_rule: OnsetRule | None = None):
        self._forces_prefix = forces_prefix
        self._rule = onset_rule if onset_rule is not None else OnsetRule()
        self._committed: list[Word] = []  # newest last, the last _CONTEXT_WORDS
        self._last_committed_end = 0.0
        # Recent hypotheses beyond the committed words, newest last, and whether each was an
        # onset hypothesis.
        self._history: list[tuple[list[Word], bool]] = []
        self._tentative: tuple[Word, ...] = ()

    @property
    def committed(self) -> tuple[Word, ...]:
        """The most recently committed words, oldest first."""
        return tuple(self._committed)

    @property
    def last_committed_end(self) -> float:
        """The commit point: where the latest committed word ends (stream time)."""
        return self._last_committed_end

    @property
    def tentative(self) -> tuple[Word, ...]:
        """The newest hypothesis's words that are not committed yet."""
        return self._tentative

    @property
    def history(self) -> list[tuple[list[Word], bool]]:
        """The pending hypotheses, newest last, each with whether it was an onset one."""
        return self._history

    # -- verbs ------------------------------------------------------------------------------
    def insert(self, hypothesis: Sequence[Word], *, onset: bool = False) -> StreamUpdate:
        """Add a pass's words; commit what it agrees on with the hypotheses before it."""
        words = self.fresh(hypothesis)
        strict = onset or (bool(self._history) and self._history[-1][1])
        agreed = whole_words(words, self._agreed_count(words, strict))
        committed, rest = words[:agreed], words[agreed:]
        self._record(committed)
        history = self._history
        kept = [(h[0][agreed:], h[1]) for h in history] if agreed else history
        self._history = (kept + [(rest, onset)])[-self._kept_hypotheses :]
        self._tentative = tuple(rest)
        return StreamUpdate(tuple(committed), self._tentative)

    def commit(self, hypothesis: Sequence[Word]) -> list[Word]:
        """Commit a segment's final pass without agreement; nothing stays pending."""
        words = self.fresh(hypothesis)
        self._record(words)
        self.clear()
        return words

    def commit_tentative(self) -> list[Word]:
        """Commit the tentative tail (the last pass heard all there was); nothing stays pending."""
        words = list(self._tentative)
        self._record(words)
        self.clear()
        return words

    def commit_settled(self, horizon: float) -> list[Word]:
        """Commit the newest hypothesis's whole words that end by ``horizon``, agreed or not."""
        latest = self._history[-1][0] if self._history else []
        forced = latest[: whole_words(latest, sum(1 for w in latest if w.end <= horizon))]
        if forced:
            self._record(forced)
            self._history = [(latest[len(forced) :], False)]
            self._tentative = tuple(latest[len(forced) :])
        return forced

    def clear(self) -> None:
        """Forget the pending hypotheses and the tentative tail; committed words stay."""
        self._history = []
        self._tentative = ()

    # -- what is already committed ------------------------------------------------------------
    def fresh(self, words: Sequence[Word]) -> list[Word]:
        """The words of a hypothesis that are not already committed."""
        fresh = list(words) if self._forces_prefix else [w for w in words if self._after_commit(w)]
        # A repeat of the committed tail right at the commit point is the same words heard
        # again (or a decoder loop); further away it is speech that really repeats.
        if fresh and self._committed and fresh[0].start - self._last_committed_end < _REPEAT_GAP:
            tail = [normalize_word(w.text) for w in self._committed[-_REPEAT_WORDS:]]
            head = [normalize_word(w.text) for w in fresh[:_REPEAT_WORDS]]
            for n in range(min(len(tail), len(head)), 0, -1):
                if tail[-n:] == head[:n]:
                    return fresh[n:]
        return fresh

    def mishears_committed(self, heard: Sequence[Word], in_window: Callable[[Word], bool]) -> bool:
        """Whether ``heard`` gives the committed words ``in_window`` as other words.

        Words are compared as agreement compares them, joined over each differing stretch (so
        "cold" + "-hearted" matches "cold-hearted"); words only one side has (at the edges of
        the committed stretch, where times are least exact) do not count.
        """
        committed = [
            k for k in (normalize_word(w.text) for w in self._committed if in_window(w)) if k
        ]
        if not committed:
            return False
        again = [
            k for k in (normalize_word(w.text) for w in heard if not self._after_commit(w)) if k
        ]
        matcher = difflib.SequenceMatcher(None, committed, again, autojunk=False)
        return any(
            tag == "replace" and "".join(committed[i1:i2]) != "".join(again[j1:j2])
            for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        )

    # -- internals ----------------------------------------------------------------------------
    @property
    def _kept_hypotheses(self) -> int:
        return max(2, self._rule.hypotheses)

    def _agreed_count(self, words: list[Word], strict: bool) -> int:
        """How many leading words of ``words`` the hypotheses before it agree on."""
        rule = self._rule
        need = self._kept_hypotheses if strict else 2
        history = self._history
        others = [h[0] for h in history[-(need - 1) :]] if len(history) >= need - 1 else []
        agreed = 0
        while others and agreed < len(words):
            word = words[agreed]
            same = [o[agreed] for o in others if agreed < len(o)]
            if len(same) < len(others) or any(
                normalize_word(w.text) != normalize_word(word.text) for w in same
            ):
                break
            if strict and (
                min(w.probability for w in [word, *same]) < rule.min_probability
                or word.probability < rule.latest_floor
            ):
                break
            agreed += 1
        return agreed

    def _after_commit(self, word: Word) -> bool:
        return word.start > self._last_committed_end - _COMMIT_SLACK

    def _record(self, words: Sequence[Word]) -> None:
        if not words:
            return
        self._committed.extend(words)
        del self._committed[:-_CONTEXT_WORDS]
        self._last_committed_end = max(self._last_committed_end, words[-1].end)

"""LocalAgreement over successive hypotheses of a growing window: :class:`HypothesisBuffer`.

Call order: :meth:`~HypothesisBuffer.insert` each pass's words (in stream time); at a segment's
end :meth:`~HypothesisBuffer.commit` its final pass, or :meth:`~HypothesisBuffer.commit_tentative`
when nothing followed the last one; :meth:`~HypothesisBuffer.clear` drops what is pending.
Invariant: committed words come out once, in audio order, and nothing heard is lost. Every new
word of a hypothesis (:mod:`.heard_again`) comes back from that call, committed or in the
tentative tail; a committed word never comes back; a segment's end commits what any of its
recent hypotheses heard after the last committed word.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.heard_again import heard_again, written_past
from desktop_rt.engine.asr.skipped import restore_skipped
from desktop_rt.engine.asr.spelling import normalize_word
from desktop_rt.engine.asr.window import after

__all__ = ["HypothesisBuffer", "OnsetRule", "StreamUpdate", "whole_words"]

_CONTEXT_WORDS = 64  # committed words remembered (prompt, forced prefix, repeat checks)
_REPEAT_WORDS = 16  # how far back a hypothesis may repeat the committed words
_REPEAT_GAP = 1.0  # a repeat of the committed tail starting this close after it is heard again
_HEARD_KEPT = 8  # hypotheses a segment's end may take words from
_CUT_AT = 0.02  # a committed word ending this close before the window's start: cut at its end
_CUT_WORD = 0.1  # a word starting this close after such a cut may be that word's last sound


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
    The newest is compared with hypotheses whose windows ended at least ``span_seconds``
    before its own (those in between are passed over): two passes a few tenths of a second
    apart hear nearly the same audio and repeat the same guess ("How do you marry" for "Had he
    married").
    """

    hypotheses: int = 2
    min_probability: float = 0.5
    latest_probability: float | None = 0.6
    span_seconds: float = 0.0

    @property
    def latest_floor(self) -> float:
        if self.latest_probability is None:
            return self.min_probability
        return self.latest_probability


def _stream_start() -> float:
    return 0.0


@dataclass(frozen=True)
class _Pending:
    """A recent hypothesis beyond the committed words: whether it was an onset one, and the
    stream time its window ended (``None``: not given)."""

    words: list[Word]
    onset: bool
    heard_end: float | None


def _past(history: list[_Pending], committed: Sequence[Word]) -> list[_Pending]:
    """The hypotheses of ``history`` that start with the ``committed`` words, less them."""
    said = [normalize_word(w.text) for w in committed]
    n = len(said)
    return [
        replace(h, words=h.words[n:])
        for h in history
        if [normalize_word(w.text) for w in h.words[:n]] == said
    ]


def _ending_by(words: Sequence[Word], t: float) -> int:
    """How many leading ``words`` end by ``t``, cut back to a whole written word."""
    n = 0
    while n < len(words) and words[n].end <= t:
        n += 1
    return whole_words(words, n)


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
    words are set aside (:func:`~.heard_again.heard_again`, given where the window starts:
    ``window_start``), compared by :func:`normalize_word`; the longest agreed prefix (cut back
    to a whole written word) is committed. An onset hypothesis, or the one after it, needs the
    :class:`OnsetRule`. A hypothesis with no new word is no evidence and changes nothing. With
    ``forces_prefix`` the backend was given the committed words and returns only what follows
    them, so words are not set aside by time, only as a repeated tail.
    """

    def __init__(
        self,
        *,
        forces_prefix: bool = False,
        onset_rule: OnsetRule | None = None,
        window_start: Callable[[], float] | None = None,
    ):
        self._forces_prefix = forces_prefix
        self._window_start = window_start if window_start is not None else _stream_start
        self._rule = onset_rule if onset_rule is not None else OnsetRule()
        self._committed: list[Word] = []  # newest last, the last _CONTEXT_WORDS
        self._last_committed_end = 0.0
        self._history: list[_Pending] = []  # recent hypotheses, newest last
        self._tentative: tuple[Word, ...] = ()
        self._heard: list[list[Word]] = []  # the segment's latest hypotheses that heard words

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
        return [(h.words, h.onset) for h in self._history]

    # -- verbs ------------------------------------------------------------------------------
    def insert(
        self, hypothesis: Sequence[Word], *, onset: bool = False, heard_end: float | None = None
    ) -> StreamUpdate:
        """Add a pass's words (its window ending at stream time ``heard_end``, if given);
        commit what it agrees on with the hypotheses before it."""
        words = self.fresh(hypothesis)
        if not words:  # heard nothing new (or nothing at all): no evidence either way
            return StreamUpdate((), self._tentative)
        self._remember(words)
        strict = onset or (bool(self._history) and self._history[-1].onset)
        others = self._compared(strict, heard_end)
        agreed = whole_words(words, self._agreed_count(words, others, strict))
        committed, rest = words[:agreed], words[agreed:]
        self._record(committed)
        kept = _past(self._history, committed) if agreed else self._history
        self._history = (kept + [_Pending(rest, onset, heard_end)])[-self._kept_hypotheses :]
        self._tentative = tuple(rest)
        return StreamUpdate(tuple(committed), self._tentative)

    def remember(self, hypothesis: Sequence[Word]) -> None:
        """Keep a pass's new words for the segment's end only (a pass not trusted to agree)."""
        self._remember(self.fresh(hypothesis))

    def commit(self, hypothesis: Sequence[Word]) -> list[Word]:
        """Commit a segment's final pass without agreement; nothing stays pending.

        What the pending hypotheses heard after its last word is committed too, and what they
        heard in a stretch it skipped (:mod:`.skipped`): a final pass that stopped early, jumped
        some speech, or heard nothing, loses nothing the passes before it heard.
        """
        words = self._with_skipped(self.fresh(hypothesis))
        self._record(words)
        return words + self._commit_pending()

    def commit_tentative(self) -> list[Word]:
        """Commit the tentative tail (the last pass heard all there was); nothing stays pending.

        As with :meth:`commit`, what older pending hypotheses heard after it, or in a stretch
        it skipped, is committed too.
        """
        words = self._with_skipped(list(self._tentative))
        self._record(words)
        return words + self._commit_pending()

    def commit_settled(self, horizon: float) -> list[Word]:
        """Commit the newest hypothesis's whole words that end by ``horizon``, agreed or not
        (with what older hypotheses heard in a stretch they skipped), and after them what older
        recent hypotheses heard that ends by ``horizon`` and before the newest one's next word."""
        latest = self._history[-1].words if self._history else []
        settled = _ending_by(latest, horizon)
        forced = self._with_skipped(latest[:settled])
        self._record(forced)
        # Older hypotheses fill only what the newest did not hear: up to its next word.
        forced += self._commit_heard(min([horizon, *(w.start for w in latest[settled:][:1])]))
        if forced:
            rest = self._after_commit(latest[settled:])
            self._history = [_Pending(rest, False, None)]
            self._tentative = tuple(rest)
        return forced

    def pending_from(self) -> float | None:
        """Where the earliest word a recent hypothesis heard and nobody committed starts."""
        starts = [w.start for w in self._tentative[:1]]
        for words in self._heard:
            starts += [w.start for w in self._after_commit(words)[:1]]
        return min(starts, default=None)

    def clear(self) -> None:
        """Forget the pending hypotheses and the tentative tail; committed words stay."""
        self._history = []
        self._heard = []
        self._tentative = ()

    # -- what is already committed ------------------------------------------------------------
    def fresh(self, words: Sequence[Word]) -> list[Word]:
        """The words of a hypothesis that are not already committed."""
        if self._forces_prefix:
            return self._unrepeated(list(words))
        return self._past_commit(words[self._heard_again(words) :])

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
            k for k in (normalize_word(w.text) for w in heard[: self._heard_again(heard)]) if k
        ]
        if again == committed:  # heard as committed (most passes): nothing replaced
            return False
        matcher = difflib.SequenceMatcher(None, committed, again, autojunk=False)
        return any(
            tag == "replace" and "".join(committed[i1:i2]) != "".join(again[j1:j2])
            for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        )

    def _heard_again(self, words: Sequence[Word]) -> int:
        """How many leading words of a hypothesis are committed words heard again.

        The window's committed words come first in a hypothesis of it, perhaps misheard or
        with other times. They are found by their text in order (:func:`heard_again`), then
        the words that end by the commit point stand for the committed words not found. So a
        word is not taken for a committed one by its time alone, which a decoder's alignment
        moves by tenths of a second, and speech that repeats the committed words is kept.
        The word a window was cut at the end of may be heard again first (:meth:`_cut_word_tail`).
        """
        start = self._window_start()
        held = [w for w in self._committed if after(w, start)]
        tail = self._cut_word_tail(words, start)
        return tail + heard_again(
            held, words[tail:], self._last_committed_end, self._tentative, start
        )

    def _cut_word_tail(self, words: Sequence[Word], start: float) -> int:
        """1 if a hypothesis starts with the committed word the window was cut at the end of,
        heard again at the window's start (its end as a decoder gives it can come early, and
        a pass then hears its last sound as that word: "Fail better. better."); else 0."""
        cut = [w for w in self._committed if start - _CUT_AT < w.end and not after(w, start)]
        if not (cut and words and words[0].start <= start + _CUT_WORD):
            return 0
        return int(normalize_word(words[0].text) == normalize_word(cut[-1].text) != "")

    def _past_commit(self, words: Sequence[Word]) -> list[Word]:
        """``words`` (new ones), the first cut to its part after the commit point when it
        writes the last committed word and the next one as one ("someone" over "some" +
        "one"): it then starts by the middle of the committed word, or is it and the tentative
        word after it."""
        out = list(words)
        if out and self._committed and out[0].start < self._last_committed_end:
            out[0] = written_past(out[0], self._committed, self._tentative)
        return out

    def _unrepeated(self, words: list[Word]) -> list[Word]:
        """``words`` less a head that repeats the committed tail right at the commit point
        (a backend given a forced prefix writing it again)."""
        if words and self._committed and words[0].start - self._last_committed_end < _REPEAT_GAP:
            tail = [normalize_word(w.text) for w in self._committed[-_REPEAT_WORDS:]]
            head = [normalize_word(w.text) for w in words[:_REPEAT_WORDS]]
            for n in range(min(len(tail), len(head)), 0, -1):
                if tail[-n:] == head[:n]:
                    return words[n:]
        return words

    # -- internals ----------------------------------------------------------------------------
    def _with_skipped(self, words: list[Word]) -> list[Word]:
        """``words`` (after the commit point) with what recent hypotheses heard in a stretch
        that they skipped."""
        earlier = [self._after_commit(h) for h in reversed(self._heard)]
        return restore_skipped(words, [h for h in earlier if h], self._last_committed_end)

    def _remember(self, words: list[Word]) -> None:
        if words:
            self._heard = [*self._heard[1 - _HEARD_KEPT :], words]

    def _commit_pending(self) -> list[Word]:
        """Commit what each recent hypothesis, newest first, heard after the commit point."""
        out = self._commit_heard(None)
        self.clear()
        return out

    def _commit_heard(self, until: float | None) -> list[Word]:
        """Commit what recent hypotheses, newest first, heard after the commit point (whole
        words ending by ``until``, if given)."""
        out: list[Word] = []
        for words in reversed(self._heard):
            more = self._after_commit(words)
            if until is not None:
                more = more[: _ending_by(more, until)]
            self._record(more)
            out += more
        return out

    def _after_commit(self, words: Sequence[Word]) -> list[Word]:
        """The words of a recent hypothesis after the commit point (it was heard on a window
        that may have held older committed words)."""
        return self._past_commit(
            words[heard_again(self._committed, words, self._last_committed_end) :]
        )

    @property
    def _kept_hypotheses(self) -> int:
        """Hypotheses kept: those an onset compares, and room for those its span passes over."""
        return max(2, self._rule.hypotheses) + (2 if self._rule.span_seconds > 0 else 0)

    def _compared(self, strict: bool, heard_end: float | None) -> list[_Pending]:
        """The hypotheses a new one is compared with: the latest one, or for an onset the
        latest ``hypotheses - 1`` whose windows ended ``span_seconds`` before ``heard_end``."""
        need = max(2, self._rule.hypotheses) - 1 if strict else 1
        history = self._history
        if strict and heard_end is not None and self._rule.span_seconds > 0:
            limit = heard_end - self._rule.span_seconds + 1e-6
            while history and (history[-1].heard_end or 0.0) > limit:
                history = history[:-1]
        return history[-need:] if len(history) >= need else []

    def _agreed_count(self, words: list[Word], compared: list[_Pending], strict: bool) -> int:
        """How many leading words of ``words`` the ``compared`` hypotheses agree on."""
        rule = self._rule
        others = [h.words for h in compared]
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

    def _record(self, words: Sequence[Word]) -> None:
        if not words:
            return
        self._committed.extend(words)
        del self._committed[:-_CONTEXT_WORDS]
        self._last_committed_end = max(self._last_committed_end, words[-1].end)

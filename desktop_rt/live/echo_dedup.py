"""Meeting mode's echo guard: words the speakers leaked into the microphone are not captioned twice.

:class:`EchoDeduplicator` sits between the microphone's session and its recorder. System-audio
words, committed and tentative, are the reference (:meth:`~EchoDeduplicator.reference`). Every
microphone event is held for ``hold_seconds`` after it arrived, and longer while the system
stream has a turn open (speech started, not yet completed), up to ``max_hold_seconds``, so the
system stream's words for the same sound have come in (:meth:`~EchoDeduplicator.mic_event`,
:meth:`tick`, :meth:`flush` return the events due, in order). Then a microphone word is dropped
when it and a neighbour form a word pair that the system stream said within ``window_seconds``
(one word alone, when its item has no other). The system stream's pairs are its items' words
in order: across its deltas, and from an item's last committed word into each tentative
hypothesis (which continues it), never from one hypothesis into another. A ``completed`` event carries the item's kept
words; an item that was all echo gets no English line (live translation) either. A system
turn that never completes counts as open for ``max_open_seconds`` at most. Text
and time, no signal processing; measured in bench/bench_echo.py, rationale in
docs/design/audio_sources.md. Thread-safe.
"""

from __future__ import annotations

import collections
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from desktop_rt.engine.protocol.events import (
    InputAudioBufferSpeechStarted,
    TranscriptionCompleted,
    TranscriptionDelta,
    TranscriptionTentative,
)
from desktop_rt.engine.protocol.translation import (
    TranslationCompleted,
    TranslationDelta,
    TranslationTentative,
)

__all__ = ["EchoDeduplicator", "normalize", "tokens"]

_NOT_WORD = re.compile(r"[^\w']+")
_ITEMS_KEPT = 64  # system items whose last committed word is kept (they are open at most)


def tokens(piece: str) -> list[str]:
    """The words of one piece of text as compared: lower case, no punctuation, hyphens split."""
    words = _NOT_WORD.sub(" ", piece.lower().replace("’", "'")).split()
    return [w.strip("'") for w in words if w.strip("'")]


def normalize(word: str) -> str:
    """One word as compared (its tokens joined): ``"Don’t,"`` is ``"don't"``."""
    return " ".join(tokens(word))


@dataclass
class _Held:
    event: object
    at: float


class EchoDeduplicator:
    """See the module docstring. ``clock``: seconds, monotonic (tests pass their own)."""

    def __init__(
        self,
        *,
        hold_seconds: float = 2.0,
        max_hold_seconds: float = 8.0,
        window_seconds: float = 30.0,
        max_open_seconds: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.hold_seconds = hold_seconds
        self.max_hold_seconds = max_hold_seconds
        self.max_open_seconds = max_open_seconds
        self._open_turns: dict[str, float] = {}  # system items speaking, not completed: since
        self.window_seconds = window_seconds
        self._clock = clock
        self._reference: collections.deque[tuple[float, str, str]] = collections.deque()
        """(when, the word before it in its item or "", word): the system stream's words."""
        self._last_said: dict[str, str] = {}  # system item -> its last committed word
        self._held: collections.deque[_Held] = collections.deque()
        self._previous: dict[str, str] = {}  # item -> its last microphone word seen
        self._kept: dict[str, str] = {}  # item -> its kept text so far
        self._echo_only: set[str] = set()  # items with words, every one of them echo
        self._lock = threading.Lock()
        self.dropped_words = 0

    # ---- inputs ----------------------------------------------------------------------------

    def reference(self, event: object) -> None:
        """A system-audio event: its committed and tentative words become the reference.

        Tentative words count, too: the system stream may commit a sentence later than the
        microphone's stream commits its echo."""
        if isinstance(event, InputAudioBufferSpeechStarted | TranscriptionCompleted):
            with self._lock:
                if isinstance(event, TranscriptionCompleted):
                    self._open_turns.pop(event.item_id, None)
                    self._last_said.pop(event.item_id, None)
                else:
                    self._open_turns[event.item_id] = self._clock()
            return
        if not isinstance(event, TranscriptionDelta | TranscriptionTentative):
            return
        now = self._clock()
        with self._lock:
            before = self._last_said.get(event.item_id, "")
            if isinstance(event, TranscriptionDelta):
                words = tokens(event.delta)
                if words:
                    self._last_said[event.item_id] = words[-1]
            else:
                words = tokens(event.text)
            for word in words:
                self._reference.append((now, before, word))
                before = word
            self._forget(now)

    def mic_event(self, event: object) -> list[object]:
        """Hold a microphone event; returns the events now due (older ones first)."""
        now = self._clock()
        with self._lock:
            self._held.append(_Held(event, now))
            return self._release(now)

    def tick(self) -> list[object]:
        """The microphone events whose hold is over."""
        with self._lock:
            return self._release(self._clock())

    def flush(self) -> list[object]:
        """Every held event (the session ends)."""
        with self._lock:
            return self._release(None)

    # ---- internals (lock held) -------------------------------------------------------------

    def _forget(self, now: float) -> None:
        horizon = now - self.window_seconds - self.hold_seconds
        while self._reference and self._reference[0][0] < horizon:
            self._reference.popleft()
        while len(self._last_said) > _ITEMS_KEPT:  # items that never completed
            del self._last_said[next(iter(self._last_said))]

    def _release(self, now: float | None) -> list[object]:
        """The held events due at ``now`` (None: all), filtered, in order."""
        if now is not None:
            for item, since in list(self._open_turns.items()):
                if now - since > self.max_open_seconds:
                    del self._open_turns[item]
        if now is None:
            due = float("inf")
        elif self._open_turns:
            due = now - self.max_hold_seconds
        else:
            due = now - self.hold_seconds
        out: list[object] = []
        while self._held and self._held[0].at <= due:
            held = self._held.popleft()
            out.append(self._filtered(held))
        return out

    def _pairs(self, at: float) -> tuple[set[tuple[str, str]], set[str]]:
        said = [
            (before, word) for t, before, word in self._reference if t >= at - self.window_seconds
        ]
        return {pair for pair in said if pair[0]}, {word for _, word in said}

    def _filtered(self, held: _Held) -> object:
        event = held.event
        if isinstance(event, TranscriptionDelta):
            kept = self._keep(event.item_id, event.delta, held.at, self._next_word(event.item_id))
            so_far = self._kept[event.item_id] = self._kept.get(event.item_id, "") + kept
            if so_far.strip() or kept == event.delta:
                self._echo_only.discard(event.item_id)
            else:
                self._echo_only.add(event.item_id)
            return replace(event, delta=kept, logprobs=None)
        if isinstance(event, TranslationDelta | TranslationTentative | TranslationCompleted):
            return self._translation(event)
        if isinstance(event, TranscriptionTentative):
            return replace(event, text=self._keep(None, event.text, held.at, ""))
        if isinstance(event, TranscriptionCompleted):
            self._previous.pop(event.item_id, None)
            kept = self._kept.pop(event.item_id, "")
            return replace(event, transcript=kept, logprobs=None)
        return event

    def _translation(
        self, event: TranslationDelta | TranslationTentative | TranslationCompleted
    ) -> object:
        """An item whose every word was echo gets no English line either."""
        if event.item_id not in self._echo_only:
            return event
        if isinstance(event, TranslationDelta):
            return replace(event, delta="")
        if isinstance(event, TranslationTentative):
            return replace(event, text="")
        return replace(event, transcript="")

    def _next_word(self, item_id: str) -> str:
        """The first word of the item's next delta still held ("" if none)."""
        for held in self._held:
            event = held.event
            if isinstance(event, TranscriptionDelta) and event.item_id == item_id:
                words = tokens(event.delta)
                if words:
                    return words[0]
        return ""

    def _keep(self, item_id: str | None, text: str, at: float, after: str) -> str:
        """``text`` without its echoed words (spacing kept: a leading space stays leading).

        A piece of text ("cold-hearted,") is dropped when half or more of its words are echo."""
        pieces = text.split()
        words = [(i, w) for i, piece in enumerate(pieces) for w in tokens(piece)]
        if not words:
            return text
        pairs, singles = self._pairs(at)
        before = self._previous.get(item_id, "") if item_id is not None else ""
        if item_id is not None:
            self._previous[item_id] = words[-1][1]
        alone = len(words) == 1 and not before and not after
        echoes = [0] * len(pieces)
        counts = [0] * len(pieces)
        for k, (i, word) in enumerate(words):
            prev = words[k - 1][1] if k else before
            nxt = words[k + 1][1] if k + 1 < len(words) else after
            echo = (prev, word) in pairs or (word, nxt) in pairs or (alone and word in singles)
            echoes[i] += int(echo)
            counts[i] += 1
        kept = [p for i, p in enumerate(pieces) if not counts[i] or 2 * echoes[i] < counts[i]]
        self.dropped_words += len(pieces) - len(kept)
        if not kept:
            return ""
        lead = " " if text[:1].isspace() else ""
        return lead + " ".join(kept)

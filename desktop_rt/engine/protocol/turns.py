"""The items of one session: the open one taking audio, the committed ones awaiting their flush.

Call order: audio goes to ``open``; :meth:`ItemLedger.commit` moves it to the committed items
(answer: ``input_audio_buffer.committed`` and a :class:`Flush`) and opens the next;
:meth:`ItemLedger.complete` takes a committed item back once the worker answered its flush;
:meth:`ItemLedger.clear` drops the open item. Invariants: ``committed`` events chain by
``previous_item_id``; an item's transcript is its deltas joined, unless the recognizer decoded
the item whole: then its transcript is that decode's text (deltas already sent stay sent; a
decode that heard nothing leaves the deltas' text); an item's ``logprobs`` entries, joined, are
its deltas (and, in ``completed``, its transcript); a cleared or completed item is never found
again, so late results for it are ignored. An item the recognizer failed on ends as
``failed``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.protocol.events import (
    Clear,
    Flush,
    InputAudioBufferCommitted,
    LogProb,
    ServerEvent,
    TranscriptionCompleted,
    TranscriptionDelta,
    TranscriptionFailed,
    TranscriptionTentative,
    new_id,
)

__all__ = ["Item", "ItemLedger", "Whole", "Words"]

Words = Sequence[Word]
Whole = Sequence[Word] | None
"""An item decoded whole once it ended (its ``completed`` transcript); ``None``: it was not."""


@dataclass
class Item:
    """One item's bookkeeping: its transcript so far and the audio handed to the worker."""

    id: str
    text: str = ""
    """The deltas sent, joined."""
    samples: int = 0
    """16 kHz samples handed to the worker."""
    appended: bool = False
    """Audio arrived for it (without VAD: even if the resampler has not released it yet)."""
    tentative: str = ""
    logprobs: list[LogProb] = field(default_factory=list)
    """One entry per word sent (the word as in its delta), in order."""
    language: str | None = None
    """The language its words are in, when known."""
    failure: str | None = None
    """Why the recognizer failed on some of its audio; it then ends as ``failed``."""

    @property
    def has_audio(self) -> bool:
        return self.appended or self.samples > 0

    def add_words(self, words: Sequence[Word]) -> str:
        """Append newly committed words; returns the delta to send ("" for none). Each word of
        it is appended to ``logprobs``."""
        entries: list[LogProb] = []
        for word in words:
            token = word.text if self.text or entries else word.text.lstrip()
            if token:  # a transcript does not start with the tokenizer's space
                entries.append(LogProb.of(token, word.probability))
        text = "".join(e.token for e in entries)
        self.text += text
        self.logprobs += entries
        return text

    def delta(self, words: Sequence[Word], logprobs: bool) -> list[ServerEvent]:
        """The delta event of newly committed words (none when they add no text)."""
        start = len(self.logprobs)
        text = self.add_words(words)
        if not text:
            return []
        return [
            TranscriptionDelta(self.id, text, tuple(self.logprobs[start:]) if logprobs else None)
        ]

    def set_tentative(self, words: Sequence[Word]) -> bool:
        """Take the current tentative words; True if their text changed."""
        text = "".join(w.text for w in words)
        text = text if self.text else text.lstrip()
        changed = text != self.tentative
        self.tentative = text
        return changed

    def completed(
        self, logprobs: bool = False, final: Sequence[Word] | None = None
    ) -> TranscriptionCompleted:
        """Its last event: ``completed``, or ``failed`` if the recognizer failed on it.
        ``final``: the item decoded whole, its transcript instead of the deltas' text (unless
        it holds no text)."""
        seconds = self.samples / SAMPLE_RATE
        text, tokens = self.text, self.logprobs
        if final is not None:
            whole = Item(self.id)
            if whole.add_words(final).strip():
                text, tokens = whole.text, whole.logprobs
        entries = tuple(tokens) if logprobs else None
        if self.failure is not None:
            return TranscriptionFailed(
                self.id, text, seconds, self.language, entries, message=self.failure
            )
        return TranscriptionCompleted(self.id, text, seconds, self.language, entries)


class ItemLedger:
    """See the module docstring."""

    def __init__(self) -> None:
        self.open = Item(new_id("item"))
        self._committed: dict[str, Item] = {}
        self._previous_id: str | None = None

    @property
    def awaiting_flush(self) -> bool:
        """Some committed item has not completed yet."""
        return bool(self._committed)

    def at_worker(self) -> Item | None:
        """The item the worker is transcribing now: the oldest committed one awaiting its flush,
        else the open one if it has handed audio (the worker answers flushes in order)."""
        for item in self._committed.values():
            return item
        return self.open if self.open.samples else None

    def find(self, item_id: str) -> Item | None:
        """The committed or open item ``item_id``; None once it completed or was cleared."""
        found = self._committed.get(item_id)
        if found is None and item_id == self.open.id:
            found = self.open
        return found

    def words(
        self,
        item_id: str,
        committed: Sequence[Word],
        tentative: Sequence[Word] | None,
        language: str | None,
        logprobs: bool,
    ) -> list[ServerEvent]:
        """A recognizer result for ``item_id`` (ignored once it ended): a delta of the
        ``committed`` words, then the ``tentative`` ones when given and changed."""
        item = self.find(item_id)
        if item is None:
            return []
        item.language = language or item.language
        events = item.delta(committed, logprobs)
        if tentative is not None and item.set_tentative(tentative):
            events.append(TranscriptionTentative(item.id, item.tentative))
        return events

    def flushed(
        self,
        item_id: str,
        committed: Sequence[Word],
        language: str | None,
        logprobs: bool,
        final: Sequence[Word] | None = None,
    ) -> list[ServerEvent]:
        """The answer to a committed item's flush: its last delta, then its end (with
        ``final``, the item decoded whole, as its transcript)."""
        item = self.complete(item_id)
        if item is None:
            return []
        item.language = language or item.language
        return [*item.delta(committed, logprobs), item.completed(logprobs, final)]

    def commit(self, final: bool) -> tuple[InputAudioBufferCommitted, Flush]:
        """Commit the open item and open the next one."""
        item = self.open
        committed = InputAudioBufferCommitted(item.id, self._previous_id)
        self._previous_id = item.id
        self._committed[item.id] = item
        self.open = Item(new_id("item"))
        return committed, Flush(item.id, final)

    def complete(self, item_id: str) -> Item | None:
        """The committed item ``item_id``, no longer awaited; None if it is not one."""
        return self._committed.pop(item_id, None)

    def clear(self) -> Clear | None:
        """Drop the open item; a :class:`Clear` for the worker if it had received audio."""
        if self.open.samples:
            dropped, self.open = self.open, Item(new_id("item"))
            return Clear(dropped.id)
        self.open = Item(self.open.id)
        return None

"""Live translation's events, and the ledger that makes them from the English stream's results.

A session with ``transcription.translate`` on has a second recognizer stream over the same
audio, translating to English (the bridge opens it). Its results become desktop-rt's own events,
sent beside the item's usual ones and only while the option is on: ``...translation.delta``
(newly final English words), ``...translation.tentative`` (the not yet final ones; sessions with
``emit_tentative`` only) and ``...translation.completed`` (the item's whole English text, once
the stream answered its flush). Call order: :meth:`TranslationLedger.sent` with every command
batch the stream is given, then :meth:`~TranslationLedger.words` / :meth:`~TranslationLedger.flushed`
with its results. Invariant, as for transcripts: an item's deltas, joined, are its completed
text; nothing is sent for a cleared item. Sans-I/O.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from desktop_rt.core_types import Word
from desktop_rt.engine.protocol.events import Clear, Command, Flush, ServerEvent
from desktop_rt.engine.protocol.turns import Item

__all__ = [
    "TRANSLATION_LANGUAGE",
    "TranslationDelta",
    "TranslationTentative",
    "TranslationCompleted",
    "TranslationLedger",
]

TRANSLATION_LANGUAGE = "en"
"""What live translation writes (Whisper's translate task)."""
_PREFIX = "conversation.item.input_audio_transcription.translation"
_CLEARED_KEPT = 16  # recently cleared items whose late results are still recognised


def _payload(item_id: str, **text: str) -> dict[str, Any]:
    """A translation event's fields: the item, its one content part, the text, its language."""
    return {"item_id": item_id, "content_index": 0, **text, "language": TRANSLATION_LANGUAGE}


@dataclass(frozen=True)
class TranslationDelta(ServerEvent):
    """English words of ``item_id`` that became final (appended to its translation)."""

    type: ClassVar[str] = f"{_PREFIX}.delta"
    item_id: str
    delta: str

    def payload(self) -> dict[str, Any]:
        return _payload(self.item_id, delta=self.delta)


@dataclass(frozen=True)
class TranslationTentative(ServerEvent):
    """The English words of ``item_id`` not final yet (replaces the previous ones)."""

    type: ClassVar[str] = f"{_PREFIX}.tentative"
    item_id: str
    text: str

    def payload(self) -> dict[str, Any]:
        return _payload(self.item_id, text=self.text)


@dataclass(frozen=True)
class TranslationCompleted(ServerEvent):
    """The whole English translation of ``item_id`` (its translation deltas, joined)."""

    type: ClassVar[str] = f"{_PREFIX}.completed"
    item_id: str
    transcript: str

    def payload(self) -> dict[str, Any]:
        return _payload(self.item_id, transcript=self.transcript)


class TranslationLedger:
    """See the module docstring; ``emit_tentative`` as for the session."""

    def __init__(self, emit_tentative: bool = False) -> None:
        self.emit_tentative = emit_tentative
        self._items: dict[str, Item] = {}
        self._awaiting: set[str] = set()
        self._cleared: deque[str] = deque(maxlen=_CLEARED_KEPT)

    @property
    def awaiting_flush(self) -> bool:
        """A flush the stream was given is not answered yet."""
        return bool(self._awaiting)

    def sent(self, commands: Sequence[Command]) -> None:
        """Commands given to the translation stream: flushes to await, items cleared."""
        for command in commands:
            if isinstance(command, Flush):
                self._awaiting.add(command.item_id)
            elif isinstance(command, Clear):
                self._items.pop(command.item_id, None)
                self._cleared.append(command.item_id)

    def words(
        self, item_id: str, committed: Sequence[Word], tentative: Sequence[Word]
    ) -> list[ServerEvent]:
        """A result of the stream: a delta of the ``committed`` words, then the tentative ones
        when shown and changed."""
        item = self._item(item_id)
        if item is None:
            return []
        events = self._delta(item, committed)
        if self.emit_tentative and item.set_tentative(tentative):
            events.append(TranslationTentative(item_id, item.tentative))
        return events

    def flushed(self, item_id: str, committed: Sequence[Word]) -> list[ServerEvent]:
        """The answer to the item's flush: its last delta, then its completed translation."""
        self._awaiting.discard(item_id)
        item = self._item(item_id)
        if item is None:
            return []
        del self._items[item_id]
        return [*self._delta(item, committed), TranslationCompleted(item_id, item.text)]

    def _item(self, item_id: str) -> Item | None:
        if item_id in self._cleared:
            return None
        return self._items.setdefault(item_id, Item(item_id))

    @staticmethod
    def _delta(item: Item, words: Sequence[Word]) -> list[ServerEvent]:
        text = item.add_words(words)
        return [TranslationDelta(item.id, text)] if text else []

"""The items of one session: the open one taking audio, the committed ones awaiting their flush.

Call order: audio goes to ``open``; :meth:`ItemLedger.commit` moves it to the committed items
(answer: ``input_audio_buffer.committed`` and a :class:`Flush`) and opens the next;
:meth:`ItemLedger.complete` takes a committed item back once the worker answered its flush;
:meth:`ItemLedger.clear` drops the open item. Invariants: ``committed`` events chain by
``previous_item_id``; an item's deltas, joined, are its transcript; a cleared or completed item
is never found again, so late results for it are ignored.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.protocol.events import (
    Clear,
    Flush,
    InputAudioBufferCommitted,
    TranscriptionCompleted,
    new_id,
)

__all__ = ["Item", "ItemLedger"]


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

    @property
    def has_audio(self) -> bool:
        return self.appended or self.samples > 0

    def add_words(self, words: Sequence[Word]) -> str:
        """Append newly committed words; returns the delta to send ("" for none)."""
        text = "".join(w.text for w in words)
        if not self.text:
            text = text.lstrip()  # a transcript does not start with the tokenizer's space
        self.text += text
        return text

    def set_tentative(self, words: Sequence[Word]) -> bool:
        """Take the current tentative words; True if their text changed."""
        text = "".join(w.text for w in words)
        text = text if self.text else text.lstrip()
        changed = text != self.tentative
        self.tentative = text
        return changed

    def completed(self) -> TranscriptionCompleted:
        return TranscriptionCompleted(self.id, self.text, self.samples / SAMPLE_RATE)


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

    def find(self, item_id: str) -> Item | None:
        """The committed or open item ``item_id``; None once it completed or was cleared."""
        found = self._committed.get(item_id)
        if found is None and item_id == self.open.id:
            found = self.open
        return found

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

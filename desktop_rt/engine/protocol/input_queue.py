"""The client input a session accepted but has not applied yet, in arrival order.

Audio goes to the worker only as its backlog leaves room, so a client that sends faster than
the model transcribes (a whole file, as fast as the socket allows) has its audio, and every
event sent after it, wait here. Call order: ``push_audio`` / ``push`` as events arrive; then
``drain``, whose ``hand`` takes audio off the head with ``take_audio`` while the worker has room.
Invariant: ``audio_bytes`` is the wire audio held (the session bounds it by
``SessionLimits.max_queued_bytes``); the order of events is never changed.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import dataclass

from desktop_rt.engine.protocol.events import (
    InputAudioBufferClear,
    InputAudioBufferCommit,
    SessionUpdate,
)

__all__ = ["QueuedAudio", "EndOfInput", "QueuedEntry", "InputQueue"]


@dataclass
class QueuedAudio:
    """One append's wire audio; ``offset`` bytes of it went to the worker already."""

    raw: bytes
    event_id: str | None = None
    offset: int = 0
    checked: bool = False
    """Its checks passed (they run when it reaches the head, in the format then current)."""

    @property
    def left(self) -> int:
        return len(self.raw) - self.offset


@dataclass(frozen=True)
class EndOfInput:
    """The client is gone: the input ends once what came before is applied."""

    event_id: str | None = None


QueuedEntry = (
    QueuedAudio | SessionUpdate | InputAudioBufferCommit | InputAudioBufferClear | EndOfInput
)


class InputQueue:
    """See the module docstring."""

    def __init__(self) -> None:
        self._entries: collections.deque[QueuedEntry] = collections.deque()
        self.audio_bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def head(self) -> QueuedEntry | None:
        return self._entries[0] if self._entries else None

    def drain(
        self, hand: Callable[[QueuedAudio], bool], apply: Callable[[QueuedEntry], None]
    ) -> None:
        """Take entries from the head: audio by ``hand`` (False: it must wait, stop here),
        every other entry popped, then given to ``apply``."""
        while (entry := self.head) is not None:
            if isinstance(entry, QueuedAudio):
                if not hand(entry):
                    return
            else:
                self.pop()
                apply(entry)

    def push_audio(self, raw: bytes, event_id: str | None) -> None:
        self._entries.append(QueuedAudio(raw, event_id))
        self.audio_bytes += len(raw)

    def push(self, entry: QueuedEntry) -> None:
        if isinstance(entry, QueuedAudio):
            self.audio_bytes += entry.left
        self._entries.append(entry)

    def pop(self) -> QueuedEntry:
        entry = self._entries.popleft()
        if isinstance(entry, QueuedAudio):
            self.audio_bytes -= entry.left
        return entry

    def take_audio(self, size: int) -> bytes:
        """Up to ``size`` bytes of the head's audio (it must be :class:`QueuedAudio`); the head
        is popped once it is all taken."""
        head = self._entries[0]
        assert isinstance(head, QueuedAudio)
        part = head.raw[head.offset : head.offset + max(0, size)]
        head.offset += len(part)
        self.audio_bytes -= len(part)
        if not head.left:
            self._entries.popleft()
        return part

    def drop_trailing_audio(self) -> int:
        """Drop the audio queued after the last other event (a clear makes it moot); returns
        how many bytes were dropped."""
        dropped = 0
        while self._entries and isinstance(self._entries[-1], QueuedAudio):
            entry = self._entries.pop()
            assert isinstance(entry, QueuedAudio)
            dropped += entry.left
        self.audio_bytes -= dropped
        return dropped

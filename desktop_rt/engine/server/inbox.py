"""A connection's client frames before and while it is served, and the model they name.

:class:`FrameInbox` keeps frames in arrival order, then an end marker; past ``max_bytes`` a
``put`` waits (TCP backpressure on the client). :func:`model_named_in` reads the model a
``session.update`` frame names, without parsing any other frame.
"""

from __future__ import annotations

import asyncio
import collections
import json

__all__ = ["FrameInbox", "model_named_in", "UPDATE_TYPES"]

Frame = str | bytes

UPDATE_TYPES = ("session.update", "transcription_session.update")
_MODEL_PATHS = (
    ("model",),
    ("audio", "input", "transcription", "model"),
    ("input_audio_transcription", "model"),
)
_MAX_UPDATE_CHARS = 1 << 20


def model_named_in(frame: Frame) -> tuple[bool, str | None]:
    """``(is a session update, the model it names or None)`` for one client frame."""
    if not isinstance(frame, str) or len(frame) > _MAX_UPDATE_CHARS or "update" not in frame:
        return False, None
    try:
        event = json.loads(frame)
    except (ValueError, RecursionError):
        return False, None
    if not isinstance(event, dict) or event.get("type") not in UPDATE_TYPES:
        return False, None
    for path in _MODEL_PATHS:
        value = event.get("session")
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, str) and value.strip():
            return True, value.strip()
    return True, None


class FrameInbox:
    """Client frames in arrival order, then the end (``get`` gives None). Past ``max_bytes``
    ``put`` waits."""

    def __init__(self, max_bytes: int):
        self._frames: collections.deque[Frame | None] = collections.deque()
        self._bytes = 0
        self._max = max_bytes
        self._readable = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()

    async def put(self, frame: Frame) -> None:
        self._frames.append(frame)
        self._bytes += len(frame)
        self._readable.set()
        if self._bytes > self._max:
            self._room.clear()
            await self._room.wait()

    def close(self) -> None:
        self._frames.append(None)
        self._readable.set()

    async def get(self) -> Frame | None:
        while not self._frames:
            self._readable.clear()
            await self._readable.wait()
        frame = self._frames.popleft()
        self._bytes -= len(frame) if frame is not None else 0
        if self._bytes <= self._max:
            self._room.set()
        return frame

    def __aiter__(self) -> FrameInbox:
        return self

    async def __anext__(self) -> Frame:
        frame = await self.get()
        if frame is None:
            raise StopAsyncIteration
        return frame

"""Fan-out of the window's captions to caption-page viewers, never blocking the session.

:class:`CaptionBroadcaster` belongs to a running server: :meth:`~CaptionBroadcaster.observe`
is called with every server event of the app's own session (on the server loop; a line the
user corrected comes through :meth:`~CaptionBroadcaster.observe_correction`) and costs one
:class:`~desktop_rt.engine.server.captions_board.CaptionBoard` update plus, per subscriber, one
call that must not block (a ``call_soon_threadsafe``). :meth:`~CaptionBroadcaster.subscribe`
returns the current snapshot and the way to unsubscribe, atomically, so no change falls between.

:class:`ViewerFanout` lives on the caption listener's loop: :meth:`~ViewerFanout.push` (any
thread) encodes a frame once and offers it to every :class:`Viewer`. Each viewer has a bounded
queue; a viewer too slow to keep up has its queue emptied and gets the whole text again (a
fresh snapshot) once it reads on, so a slow phone costs memory of ``queue_size`` frames at most
and never delays the others or the app. Its ``clean`` filter (the window's non-speech filter)
is applied to every frame's text before encoding (:func:`~desktop_rt.engine.server.captions_board.shown`).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable

from desktop_rt.engine.protocol.events import ServerEvent
from desktop_rt.engine.server.captions_board import CaptionBoard, Frame, TextFilter, shown

__all__ = ["CaptionBroadcaster", "Viewer", "ViewerFanout", "RESYNC"]

Subscriber = Callable[[Frame], None]

RESYNC = object()
"""Queued for a new viewer, when the source changes, and instead of the frames a slow viewer
missed: that viewer is sent the whole text (a snapshot) when it gets there."""


class CaptionBroadcaster:
    """See the module docstring. Thread-safe; subscribers are called under its lock, in order."""

    def __init__(self, max_lines: int = 200):
        self._board = CaptionBoard(max_lines)
        self._lock = threading.Lock()
        self._subscribers: dict[int, Subscriber] = {}
        self._next_id = 0

    def observe(self, event: ServerEvent) -> None:
        """One server event of the window's session (never blocks: subscribers do not)."""
        with self._lock:
            frame = self._board.apply(event)
            if frame is not None:
                self._send(frame)

    def observe_translation(self, item_id: str, text: str) -> None:
        """The translation hook: the line ``item_id`` is translated as ``text`` (replaces it)."""
        with self._lock:
            self._send(self._board.apply_translation(item_id, text))

    def observe_correction(self, item_id: str, text: str) -> None:
        """The user corrected the final line ``item_id`` in the window (any thread, never
        blocks): viewers get the line with ``text`` as its committed words."""
        with self._lock:
            frame = self._board.apply_correction(item_id, text)
            if frame is not None:
                self._send(frame)

    def snapshot(self) -> Frame:
        with self._lock:
            return self._board.snapshot()

    def subscribe(self, subscriber: Subscriber) -> tuple[Frame, Callable[[], None]]:
        """``(snapshot now, unsubscribe)``; ``subscriber(frame)`` then gets every change."""
        with self._lock:
            key, self._next_id = self._next_id, self._next_id + 1
            self._subscribers[key] = subscriber
            snapshot = self._board.snapshot()

        def unsubscribe() -> None:
            with self._lock:
                self._subscribers.pop(key, None)

        return snapshot, unsubscribe

    @property
    def subscriber_count(self) -> int:
        with self._lock:
            return len(self._subscribers)

    def _send(self, frame: Frame) -> None:
        for subscriber in self._subscribers.values():
            subscriber(frame)


class Viewer:
    """One connected page: a bounded queue of encoded frames (or :data:`RESYNC`)."""

    def __init__(self, queue_size: int):
        self.queue: asyncio.Queue[str | object] = asyncio.Queue(queue_size)
        self.resyncs = 0
        """How many times this viewer fell behind and was sent the whole text again."""

    def offer(self, item: str | object) -> None:
        """Queue an encoded frame (or :data:`RESYNC`); a full queue is emptied and replaced by
        one :data:`RESYNC`."""
        try:
            self.queue.put_nowait(item)
        except asyncio.QueueFull:
            while not self.queue.empty():
                self.queue.get_nowait()
            self.queue.put_nowait(RESYNC)
            self.resyncs += 1


class ViewerFanout:
    """The viewers of one caption listener; every method but :meth:`push` and :meth:`follow`
    runs on ``loop``."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        queue_size: int = 64,
        clean: TextFilter | None = None,
    ):
        self._loop = loop
        self.queue_size = queue_size
        self._clean = clean
        self.viewers: set[Viewer] = set()
        self._snapshot: Frame = {"type": "snapshot", "lines": []}
        self._unsubscribe: Callable[[], None] | None = None
        self._source: CaptionBroadcaster | None = None

    # ---- any thread -----------------------------------------------------------------------

    def push(self, frame: Frame) -> None:
        """A change from the broadcaster: handed to the loop, never waits."""
        self._loop.call_soon_threadsafe(self._push_here, frame)

    def follow(self, source: CaptionBroadcaster | None) -> None:
        """Show ``source``'s captions from now on (None: none); viewers get its snapshot."""
        self._loop.call_soon_threadsafe(self._follow_here, source)

    # ---- on the loop ----------------------------------------------------------------------

    def join(self) -> Viewer:
        """A new viewer, whose first frame is the whole text."""
        viewer = Viewer(self.queue_size)
        viewer.offer(RESYNC)
        self.viewers.add(viewer)
        return viewer

    def leave(self, viewer: Viewer) -> None:
        self.viewers.discard(viewer)

    def next_text(self, item: str | object) -> str:
        """What to send for a dequeued item: the snapshot for :data:`RESYNC`."""
        if isinstance(item, str):
            return item
        source = self._source
        return self._encode(source.snapshot() if source is not None else self._snapshot)

    def close(self) -> None:
        """Stop following (the listener is closing: viewers are not sent anything more)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._unsubscribe, self._source = None, None

    def _encode(self, frame: Frame) -> str:
        return json.dumps(shown(frame, self._clean) if self._clean is not None else frame)

    def _push_here(self, frame: Frame) -> None:
        text = self._encode(frame)
        for viewer in self.viewers:
            viewer.offer(text)

    def _follow_here(self, source: CaptionBroadcaster | None) -> None:
        if source is self._source:
            return
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self._source = source
        if source is not None:
            _snapshot, self._unsubscribe = source.subscribe(self.push)
        for viewer in self.viewers:
            viewer.offer(RESYNC)

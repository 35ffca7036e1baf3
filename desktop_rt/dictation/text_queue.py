"""The texts a typer's thread has yet to put in, and a wait until it has put in all of them.

:class:`TextQueue` is shared by the typers that type on a thread of their own: ``put`` (any
thread, returns at once), ``texts`` (the typer's thread: each text in order, until ``close``),
``done`` once a text was put in or failed, and ``wait_idle`` (any thread).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator

__all__ = ["TextQueue"]


class TextQueue:
    """See the module docstring."""

    def __init__(self) -> None:
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._pending = 0
        self._idle = threading.Condition()

    def put(self, text: str) -> None:
        with self._idle:
            self._pending += 1
        self._queue.put(text)

    def close(self) -> None:
        """``texts`` ends after the texts put before this."""
        self._queue.put(None)

    def texts(self) -> Iterator[str]:
        """Each text in order (blocks for the next); call ``done`` once each is through."""
        while (text := self._queue.get()) is not None:
            yield text

    def done(self) -> None:
        with self._idle:
            self._pending -= 1
            self._idle.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """True once every text put so far is done (False after ``timeout`` seconds)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)

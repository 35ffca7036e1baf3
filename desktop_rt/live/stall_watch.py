"""A watchdog on an audio source's blocks: is an open source still delivering?

A driver can stop calling back without closing the stream or saying anything. :class:`StallWatch`
notices: ``opened(now)`` when the source reports it is open, ``arrived(now)`` for every block
(from any thread: it only stores the time), ``closed()`` when the source reports anything but
open; ``check(now)``, from the watching thread, returns "silent" once no block came for
``limit`` seconds while open, then "back" once blocks come again, else None. No Qt; seconds.
"""

from __future__ import annotations

__all__ = ["StallWatch"]


class StallWatch:
    """See the module docstring."""

    def __init__(self, limit: float = 1.0):
        if limit <= 0:
            raise ValueError("limit must be positive")
        self.limit = limit
        self._watching = False
        self._silent = False
        self._last = 0.0

    @property
    def silent(self) -> bool:
        return self._silent

    def opened(self, now: float) -> None:
        self._watching = True
        self._silent = False
        self._last = max(self._last, now)

    def closed(self) -> None:
        self._watching = False
        self._silent = False

    def arrived(self, now: float) -> None:
        self._last = now

    def check(self, now: float) -> str | None:
        if not self._watching:
            return None
        quiet = now - self._last > self.limit
        if quiet and not self._silent:
            self._silent = True
            return "silent"
        if not quiet and self._silent:
            self._silent = False
            return "back"
        return None

"""What a screen reader hears of the captions: committed words only, at most once per interval.

:class:`AnnouncementQueue` is fed the committed text of each turn as it grows
(:meth:`~AnnouncementQueue.committed`); it keeps the words not yet announced, and
:meth:`~AnnouncementQueue.take` releases them, joined, no sooner than ``interval`` seconds after
the last release (:meth:`~AnnouncementQueue.due` says when). Tentative words are never fed in,
so nothing is announced twice or announced and then taken back. No Qt; times are seconds.
"""

from __future__ import annotations

import math

__all__ = ["AnnouncementQueue"]

_REMEMBERED_TURNS = 64


class AnnouncementQueue:
    """See the module docstring."""

    def __init__(self, interval: float = 2.0):
        self.interval = interval
        self._said: dict[str, str] = {}  # item id -> committed text already queued
        self._pending: list[str] = []
        self._last = -math.inf

    def committed(self, item_id: str, text: str) -> None:
        """The whole committed text of one turn now; the words past the count already queued
        for it are queued (a final revision of earlier words is not announced again)."""
        said = self._said.get(item_id, "").split()
        words = text.split()
        self._said[item_id] = text
        if len(self._said) > _REMEMBERED_TURNS:
            del self._said[next(iter(self._said))]
        if len(words) > len(said):  # words past those already queued; revisions are not repeated
            self._pending.append(" ".join(words[len(said) :]))

    def due(self, now: float) -> float | None:
        """Seconds until :meth:`take` releases text (0: now); None when nothing waits."""
        if not self._pending:
            return None
        return max(0.0, self._last + self.interval - now)

    def take(self, now: float) -> str | None:
        if not self._pending or now - self._last < self.interval:
            return None
        text, self._pending = " ".join(self._pending), []
        self._last = now
        return text

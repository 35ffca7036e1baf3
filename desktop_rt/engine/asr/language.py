"""Which language each pass is given: :class:`LanguageTracker`.

Call order: ``for_pass`` before each pass; after a pass given no language, ``learn`` what the
backend detected; ``new_segment`` when a segment ends; ``set`` when the user picks one;
``for_turn`` for a turn decoded whole. A set language is always given; with none set, the
stream's detected language is given except on the first long-enough pass of each segment, which
detects again. That check keeps the stream's language unless two segments in a row are surely
another: a short noisy prompt reads as Chinese at 0.6 now and then. A turn decoded whole gets
the stream's language (its own passes have checked it), not a detection of its own.
"""

from __future__ import annotations

from desktop_rt.engine.asr.backend import DetectedLanguage

__all__ = ["LanguageTracker"]

_SURE = 0.6  # a detected language this probable is kept for the stream


class LanguageTracker:
    """The set language, or the one detected on this stream and whether this segment confirmed
    it. ``min_seconds``: the shortest window a detection is trusted on."""

    def __init__(self, language: str | None, min_seconds: float):
        self._min_seconds = min_seconds
        self._language = language
        self._detected: str | None = None
        self._other: str | None = None  # another language the last segment's check was sure of
        self._segment_checked = False

    def set(self, language: str | None) -> None:
        """Use ``language`` from now on (empty or ``None``: detect); forget any detection."""
        self._language = language or None
        self._detected = self._other = None
        self._segment_checked = False

    def new_segment(self) -> None:
        self._segment_checked = False

    def for_pass(self, window_seconds: float) -> str | None:
        """The language to give a pass over a window this long; ``None``: detect."""
        if self._language is not None or self._detected is None:
            return self._language
        if self._segment_checked or window_seconds < self._min_seconds:
            return self._detected
        return None

    def for_turn(self) -> str | None:
        """The language to give a turn decoded whole: the set one, else the stream's detected
        one; ``None`` (detect) only while the stream has none."""
        return self._language or self._detected

    def learn(self, found: DetectedLanguage | None, window_seconds: float) -> None:
        """Take what a pass given no language detected on a long-enough window: with no
        stream language yet, a sure detection becomes it (else the next pass detects again);
        with one, this segment's check is done, and the language changes only when this check
        and the last segment's were sure of the same other one."""
        if window_seconds < self._min_seconds:
            return
        sure = found[0] if found and found[1] >= _SURE else None
        if self._detected is None:
            self._detected, self._segment_checked = sure, sure is not None
            return
        self._segment_checked = True
        if sure is None or sure == self._detected:
            self._other = None
        elif sure == self._other:
            self._detected, self._other = sure, None
        else:
            self._other = sure

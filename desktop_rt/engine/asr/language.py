"""Which language each pass is given: :class:`LanguageTracker`.

Call order: ``for_pass`` before each pass; after a pass given no language, ``learn`` what the
backend detected; ``new_segment`` when a segment ends; ``set`` when the user picks one. A set
language is always given; with none set, the stream's detected language is given except on the
first long-enough pass of each segment, which detects again (confirms or changes it).
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
        self._segment_checked = False

    def set(self, language: str | None) -> None:
        """Use ``language`` from now on (empty or ``None``: detect); forget any detection."""
        self._language = language or None
        self._detected = None
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

    def learn(self, found: DetectedLanguage | None, window_seconds: float) -> None:
        """Keep what a pass given no language detected, when it is sure and the window long
        enough; else the next pass detects again."""
        if found and found[1] >= _SURE and window_seconds >= self._min_seconds:
            self._detected, self._segment_checked = found[0], True

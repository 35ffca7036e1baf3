"""The audio a pass hears: :class:`AudioWindow`, a growing buffer cut at its start.

Call order: ``append`` audio as it comes; ``drop_before``/``cut`` move the window's start
forward (never back); ``reset`` empties it where the stream is now. The stream clock
(``stream_seconds``) counts every sample ever appended and never goes back; ``start`` and the
words' times are stream seconds.
"""

from __future__ import annotations

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE, Word

__all__ = ["EDGE", "AudioWindow", "after"]

EDGE = 0.06
"""A word ending this close after the window's start lies before it (a cut's margin, rounding)."""
_PREFIX_MARGIN = 1.0  # committed words ending this close before the start are forced too


def after(word: Word, start: float) -> bool:
    """Whether a word lies after stream time ``start``: it ends more than ``EDGE`` after it, or
    begins after it."""
    return word.end > start + EDGE or word.start >= start


class AudioWindow:
    """The current segment's audio from ``start`` on, and what it holds of the committed words.

    ``grid``: a block backend's block length; cuts then fall on the grid counted from the
    window's start, so the blocks the backend keeps stay the same. ``forces_prefix``: committed
    words still in the window are forced rather than heard (see :meth:`holds_committed`).
    """

    def __init__(self, *, grid: float | None = None, forces_prefix: bool = False):
        self._grid = grid
        self._forces_prefix = forces_prefix
        self.samples = np.zeros(0, dtype=np.float32)
        self.start = 0.0
        """Stream time of the window's first sample."""
        self.segment_begin = 0.0
        """Stream time the current segment's window began."""
        self.new_samples = 0
        """Samples appended since the last pass (or counted as new by the caller)."""
        self.trimmed = False
        """Whether the window was trimmed (or cut for a pass) since the segment began."""
        self._total = 0

    def __len__(self) -> int:
        return len(self.samples)

    def start_time(self) -> float:
        """``start`` as a callable, for readers that must not hold the transcriber."""
        return self.start

    @property
    def seconds(self) -> float:
        """How much audio the window holds."""
        return len(self.samples) / SAMPLE_RATE

    @property
    def stream_seconds(self) -> float:
        """Seconds of audio appended since the window was created: the stream clock."""
        return self._total / SAMPLE_RATE

    def append(self, samples: np.ndarray) -> None:
        self.samples = np.concatenate([self.samples, samples])
        self._total += samples.size
        self.new_samples += samples.size

    def drop_before(self, t: float) -> None:
        """Drop window audio before stream time ``t`` (never past the window's end)."""
        cut = int(round((t - self.start) * SAMPLE_RATE))
        if cut <= 0:
            return
        cut = min(cut, len(self.samples))
        self.samples = self.samples[cut:]
        self.start += cut / SAMPLE_RATE

    def cut(self, t: float) -> None:
        """Start the window at ``t``, or on a grid at the last grid point before it.

        Committed words between that point and ``t`` stay in the window; hypotheses drop them
        as they always drop committed words.
        """
        if self._grid is not None:
            t = self.start + int((t - self.start) / self._grid + 1e-6) * self._grid
        self.drop_before(t)

    def keep_until(self, t: float) -> None:
        """Drop window audio after stream time ``t``."""
        keep = int(max(0.0, t - self.start) * SAMPLE_RATE)
        self.samples = self.samples[:keep]

    def reset(self) -> None:
        """Empty the window; a new segment begins where the stream is now."""
        self.segment_begin = self.stream_seconds
        self.samples = np.zeros(0, dtype=np.float32)
        self.start = self.stream_seconds
        self.new_samples = 0
        self.trimmed = False

    def contains(self, word: Word) -> bool:
        """Whether a word's audio lies inside the window (see :func:`after`)."""
        return after(word, self.start)

    def holds_committed(self, word: Word) -> bool:
        """Whether a committed word belongs to the window (forced or heard again), not to the
        prompt.

        Word times inside a pass are estimates (the GGUF backend spreads them by characters),
        so with a forced prefix the committed words of this segment ending up to
        ``_PREFIX_MARGIN`` before the window's start are forced too: forcing a word whose audio
        has left the window is harmless, leaving out one whose audio is still there would have
        it heard twice.
        """
        if self._forces_prefix:
            return word.end > max(self.segment_begin, self.start - _PREFIX_MARGIN) + EDGE
        return self.contains(word)

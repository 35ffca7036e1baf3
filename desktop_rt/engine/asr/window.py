"""The audio a pass hears: :class:`AudioWindow`, a growing buffer cut at its start.

Call order: ``append`` audio as it comes; ``drop_before``/``cut`` move the window's start
forward (never back); ``reset`` empties it where the stream is now. The stream clock
(``stream_seconds``) counts every sample ever appended and never goes back; ``start`` and the
words' times are stream seconds. ``samples`` is a view of a buffer that grows by doubling (an
append copies the chunk, not the window); audio once shown in a view is never overwritten.
"""

from __future__ import annotations

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE, Word

__all__ = ["EDGE", "AudioWindow", "after"]

EDGE = 0.06
"""A word ending this close after the window's start lies before it (a cut's margin, rounding)."""
_PREFIX_MARGIN = 1.0  # committed words ending this close before the start are forced too
_MIN_CAPACITY = 4 * SAMPLE_RATE  # samples a new buffer holds at least


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
        self._buffer = np.zeros(0, dtype=np.float32)
        self._first = self._end = 0  # the window is ``_buffer[_first:_end]``
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
        return self._end - self._first

    @property
    def samples(self) -> np.ndarray:
        """The window's audio: a view that later appends, cuts and resets leave as it is."""
        return self._buffer[self._first : self._end]

    def start_time(self) -> float:
        """``start`` as a callable, for readers that must not hold the transcriber."""
        return self.start

    @property
    def seconds(self) -> float:
        """How much audio the window holds."""
        return len(self) / SAMPLE_RATE

    @property
    def stream_seconds(self) -> float:
        """Seconds of audio appended since the window was created: the stream clock."""
        return self._total / SAMPLE_RATE

    def append(self, samples: np.ndarray) -> None:
        n = samples.size
        if self._end + n > len(self._buffer):
            self._grow(n)
        self._buffer[self._end : self._end + n] = samples
        self._end += n
        self._total += n
        self.new_samples += n

    def _grow(self, n: int) -> None:
        """Move the window into a new buffer with room for ``n`` more samples and as many
        again (the old buffer stays as it is for any view of it)."""
        size = len(self)
        buffer = np.empty(max(2 * (size + n), _MIN_CAPACITY), dtype=np.float32)
        buffer[:size] = self._buffer[self._first : self._end]
        self._buffer, self._first, self._end = buffer, 0, size

    def drop_before(self, t: float) -> None:
        """Drop window audio before stream time ``t`` (never past the window's end)."""
        cut = int(round((t - self.start) * SAMPLE_RATE))
        if cut <= 0:
            return
        cut = min(cut, len(self))
        self._first += cut
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
        kept = self._buffer[self._first : self._end][:keep].copy()  # appends never overwrite
        self._buffer, self._first, self._end = kept, 0, len(kept)

    def reset(self) -> None:
        """Empty the window; a new segment begins where the stream is now."""
        self.segment_begin = self.stream_seconds
        self._buffer = np.zeros(0, dtype=np.float32)
        self._first = self._end = 0
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

"""A file's speech, grouped into windows for whole-file recognition: :class:`WindowPlanner`.

Call order: ``planner = WindowPlanner(scorer, options)``, ``planner.feed(samples)`` as the file
decodes (it returns the windows that filled up), ``planner.finish()`` at the end. Each 32 ms
frame is scored by Silero (:class:`~desktop_rt.engine.audio.vad.FrameVad`). A window is the
file's speech in order: a pause up to ``long_pause_seconds`` is kept whole, a longer one keeps
its first and last ``pad_seconds``, as does the silence before and after the speech. A full
window is cut in its longest pause after ``min_window_seconds``; with ``first_window_seconds``
the first window is at most that long and cut in its longest pause after half of it (a short
first window: streamed answers start sooner).
Invariants: no frame is dropped from speech or its padding, none is given twice; the planner
holds at most one window of audio.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.vad import FRAME_SAMPLES, FRAME_SECONDS, FrameVad, SpeechProbability

__all__ = ["SpeechWindow", "WindowOptions", "WindowPlanner"]

_HYSTERESIS = 0.15  # speech goes on down to threshold - this (as in the TurnDetector)


@dataclass(frozen=True)
class WindowOptions:
    """How a file's speech is grouped into windows (the choices: file_transcription.md)."""

    threshold: float = 0.5  # Silero probability at which speech starts
    pad_seconds: float = 0.4  # audio kept before speech and after it
    long_pause_seconds: float = 2.0  # a pause longer than this keeps only its pads
    max_window_seconds: float = 28.0  # the most audio one window holds (Whisper takes 30 s)
    min_window_seconds: float = 14.0  # a full window is cut in a pause after this much
    min_speech_seconds: float = 0.2  # a window with less speech than this is noise; dropped
    # the most audio the first window holds (cut in a pause after half of it); None: as the rest
    first_window_seconds: float | None = None


@dataclass(frozen=True, slots=True)
class _Frame:
    index: int  # the frame's place in the file (times FRAME_SAMPLES: its first sample)
    audio: np.ndarray
    probability: float
    speech: bool


@dataclass(frozen=True)
class SpeechWindow:
    """One window of a file: its audio as the backend hears it, and where each frame came from.

    ``frames[k]`` is the file frame of window samples ``[k * 512, (k + 1) * 512)``.
    """

    audio: np.ndarray  # float32, 16 kHz
    frames: np.ndarray  # int64 file frame index of each 512-sample frame of ``audio``
    speech: np.ndarray  # bool: whether each frame is speech

    @property
    def speech_seconds(self) -> float:
        return int(np.count_nonzero(self.speech)) * FRAME_SECONDS

    @property
    def seconds(self) -> float:
        return len(self.audio) / SAMPLE_RATE

    @property
    def start(self) -> float:
        """File time of the window's first sample."""
        return float(self.frames[0]) * FRAME_SECONDS

    @property
    def end(self) -> float:
        """File time just after the window's last sample."""
        tail = len(self.audio) - (len(self.frames) - 1) * FRAME_SAMPLES
        return (float(self.frames[-1]) * FRAME_SAMPLES + tail) / SAMPLE_RATE

    def after(self, seconds: float) -> SpeechWindow:
        """The part of the window from the first frame that starts at window time ``seconds``
        or later (at least the last frame)."""
        k = int(np.ceil(seconds * SAMPLE_RATE / FRAME_SAMPLES - 1e-9))
        k = min(max(k, 0), len(self.frames) - 1)
        return SpeechWindow(self.audio[k * FRAME_SAMPLES :], self.frames[k:], self.speech[k:])

    def file_time(self, seconds: float) -> float:
        """The file time of window time ``seconds`` (times past the end run on from the last
        frame)."""
        sample = seconds * SAMPLE_RATE
        k = min(max(int(sample) // FRAME_SAMPLES, 0), len(self.frames) - 1)
        return (float(self.frames[k]) * FRAME_SAMPLES + sample - k * FRAME_SAMPLES) / SAMPLE_RATE


class WindowPlanner:
    """Turns a file's audio, fed in order, into :class:`SpeechWindow` s (see the module)."""

    def __init__(
        self, scorer: SpeechProbability | None = None, options: WindowOptions = WindowOptions()
    ):
        self.options = options
        self._vad = FrameVad(scorer)
        self._pending = np.zeros(0, dtype=np.float32)  # fed samples not yet a whole frame
        self._next = 0  # index of the next frame
        self._pad = max(1, round(options.pad_seconds / FRAME_SECONDS))
        self._long_pause = round(options.long_pause_seconds / FRAME_SECONDS)
        self._max = max(2, int(options.max_window_seconds / FRAME_SECONDS))
        self._min = min(self._max - 1, int(options.min_window_seconds / FRAME_SECONDS))
        self._first_max = self._max  # the first window's bounds, until it is cut
        self._first_min = self._min
        if options.first_window_seconds is not None:
            self._first_max = min(
                self._max, max(2, int(options.first_window_seconds / FRAME_SECONDS))
            )
            self._first_min = min(self._first_max - 1, self._first_max // 2)
        self._cuts = 0  # windows cut so far
        self._kept: list[_Frame] = []  # the window being filled
        self._waiting: deque[_Frame] = deque()  # pause frames not kept yet
        self._silence = 0  # non-speech frames since the window's last speech frame
        self._in_speech = False

    @property
    def position(self) -> float:
        """File seconds scored so far."""
        return self._next * FRAME_SECONDS

    @property
    def settled(self) -> float:
        """File seconds before which every window has been given out."""
        return self._kept[0].index * FRAME_SECONDS if self._kept else self.position

    @property
    def held_seconds(self) -> float:
        """Audio the planner holds now (at most a window and a pad)."""
        held = len(self._kept) + len(self._waiting)
        return held * FRAME_SECONDS + len(self._pending) / SAMPLE_RATE

    def feed(self, samples: np.ndarray) -> list[SpeechWindow]:
        """Score ``samples`` (float32, 16 kHz, the next of the file); the windows that filled."""
        samples = np.asarray(samples, dtype=np.float32).reshape(-1)
        scored = self._vad.process(samples)
        buffer = np.concatenate([self._pending, samples])
        out: list[SpeechWindow] = []
        for k, (_, probability) in enumerate(scored):
            audio = buffer[k * FRAME_SAMPLES : (k + 1) * FRAME_SAMPLES].copy()
            window = self._take(audio, probability)
            if window is not None:
                out.append(window)
        self._pending = buffer[len(scored) * FRAME_SAMPLES :].copy()
        return [w for w in out if w.speech_seconds >= self.options.min_speech_seconds]

    def finish(self) -> list[SpeechWindow]:
        """The last window (with the file's last part-frame, if speech reaches it)."""
        if self._kept and len(self._pending) and self._silence < self._pad:
            self._kept.append(_Frame(self._next, self._pending, 0.0, False))
        self._pending = np.zeros(0, dtype=np.float32)
        kept, self._kept = self._kept, []
        self._waiting.clear()
        if not kept:
            return []
        window = _window(kept)
        return [window] if window.speech_seconds >= self.options.min_speech_seconds else []

    def _take(self, audio: np.ndarray, probability: float) -> SpeechWindow | None:
        """One scored frame: kept, held back as a pause or dropped; a window if one filled."""
        threshold = self.options.threshold
        speech = probability >= threshold or (
            self._in_speech and probability >= threshold - _HYSTERESIS
        )
        self._in_speech = speech
        frame = _Frame(self._next, audio, probability, speech)
        self._next += 1
        if speech:
            self._kept.extend(self._waiting)  # a short pause, a long one's last pad, or the
            self._waiting.clear()  # pad before the first speech
            self._kept.append(frame)
            self._silence = 0
            return self._cut() if self._full() else None
        self._silence += 1
        if self._kept and self._silence <= self._pad:
            self._kept.append(frame)  # a pause's first pad
        else:
            self._waiting.append(frame)
            if not self._kept or self._silence > self._long_pause:
                while len(self._waiting) > self._pad:
                    self._waiting.popleft()
        return self._cut() if self._full() else None

    def _bounds(self) -> tuple[int, int]:
        """The most frames the window being filled holds, and the earliest frame it is cut at."""
        return (self._first_max, self._first_min) if self._cuts == 0 else (self._max, self._min)

    def _full(self) -> bool:
        return len(self._kept) >= self._bounds()[0]

    def _cut(self) -> SpeechWindow:
        """Cut the full window in its best pause; the rest starts the next one."""
        most, earliest = self._bounds()
        cut = _cut_point(self._kept[:most], earliest)
        window, self._kept = _window(self._kept[:cut]), self._kept[cut:]
        self._cuts += 1
        return window


def _cut_point(frames: list[_Frame], earliest: int) -> int:
    """Where a full window (``frames``) is cut: the middle of its longest pause at or after
    ``earliest`` (the latest of equals), else at its least speech-like frame there."""
    best_start, best_length = -1, 0
    run_start = None
    for i in range(earliest, len(frames) + 1):
        if i < len(frames) and not frames[i].speech:
            run_start = i if run_start is None else run_start
            continue
        if run_start is not None and i - run_start >= best_length:
            best_start, best_length = run_start, i - run_start
        run_start = None
    if best_length:
        return max(1, best_start + (best_length + 1) // 2)
    tail = [f.probability for f in frames[earliest:]]
    return max(1, earliest + int(np.argmin(tail)))


def _window(frames: list[_Frame]) -> SpeechWindow:
    return SpeechWindow(
        audio=np.concatenate([f.audio for f in frames]),
        frames=np.array([f.index for f in frames], dtype=np.int64),
        speech=np.array([f.speech for f in frames], dtype=bool),
    )

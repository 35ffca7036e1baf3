"""Server VAD gating: which decoded audio reaches the recognizer, and where turns start and stop.

:class:`SpeechGate` runs a :class:`~desktop_rt.engine.audio.vad.FrameVad` and a
:class:`~desktop_rt.engine.audio.vad.TurnDetector` over the session's 16 kHz stream. Sans-I/O; the
speech scorer is injected.
"""

from __future__ import annotations

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.vad import (
    FRAME_SAMPLES,
    FrameVad,
    SpeechProbability,
    TurnDetector,
    TurnDetectorSettings,
)

__all__ = ["SpeechGate"]


class SpeechGate:
    """server_vad: which decoded audio reaches the recognizer, and where turns start and stop.

    Outside a turn, audio waits in a short pre-roll; when a turn starts, the pre-roll from the
    turn's start (prefix padding included) is released. ``process`` returns, in order,
    ``("audio", samples)`` for the open item and ``("started"|"stopped", stream_sample)``.
    """

    def __init__(self, scorer: SpeechProbability, settings: TurnDetectorSettings, origin: int):
        self._vad = FrameVad(scorer)
        self._turns = TurnDetector(settings)
        self._origin = origin  # stream sample where the FrameVad clock starts
        self._pos = origin
        self._held = np.zeros(0, dtype=np.float32)
        self.in_speech = False

    @property
    def settings(self) -> TurnDetectorSettings:
        return self._turns.settings

    @settings.setter
    def settings(self, value: TurnDetectorSettings) -> None:
        self._turns.settings = value  # keeps the turn state: no duplicate speech_started

    def process(self, samples: np.ndarray) -> list[tuple[str, object]]:
        start = self._pos
        self._pos += len(samples)
        out: list[tuple[str, object]] = []
        cursor = 0
        for frame_start, prob in self._vad.process(samples):
            for turn in self._turns.feed([(frame_start, prob)]):
                frame_end = self._origin + round(frame_start * SAMPLE_RATE) + FRAME_SAMPLES
                cut = min(max(frame_end - start, cursor), len(samples))
                self._route(samples[cursor:cut], out)
                cursor = cut
                at = self._origin + round(turn.at * SAMPLE_RATE)
                out.append((turn.kind, at))
                self.in_speech = turn.kind == "started"
                if self.in_speech:
                    # The pre-roll ends where this chunk's cursor is; release it from ``at`` on.
                    keep = min(len(self._held), max(0, start + cursor - at))
                    out.append(("audio", self._held[len(self._held) - keep :]))
                    self._held = np.zeros(0, dtype=np.float32)
        self._route(samples[cursor:], out)
        return out

    def _route(self, part: np.ndarray, out: list[tuple[str, object]]) -> None:
        if self.in_speech:
            out.append(("audio", part))
        elif len(part):
            limit = round(self.settings.prefix_padding_ms * SAMPLE_RATE / 1000) + 2 * FRAME_SAMPLES
            self._held = np.concatenate([self._held, part])[-limit:]

    def take_held(self) -> np.ndarray:
        held, self._held = self._held, np.zeros(0, dtype=np.float32)
        return held

    def reset(self) -> None:
        self._turns.reset()
        self.in_speech = False
        self._held = np.zeros(0, dtype=np.float32)

"""A session's audio intake: wire audio in; 16 kHz audio for the open item and turns out.

:class:`AudioIntake` decodes appended wire audio (:class:`~desktop_rt.engine.audio.codecs.WireDecoder`)
and, with turn detection on, runs it through the server VAD
(:class:`~desktop_rt.engine.audio.speech_gate.SpeechGate`) and the idle timer. ``decode`` /
``feed`` return :class:`Steps <Step>` in stream order; the session turns them into items, events
and worker commands. The stream clock (``samples``) counts every decoded 16 kHz sample. The idle
timer counts audio, not wall-clock time: after ``idle_timeout_ms`` of audio with no speech it
fires once, then waits for the next turn. Sans-I/O; the VAD scorer is injected.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.codecs import AudioFormat, WireDecoder
from desktop_rt.engine.audio.speech_gate import SpeechGate
from desktop_rt.engine.audio.vad import SpeechProbability, TurnDetectorSettings
from desktop_rt.engine.protocol.fields import ProtocolError

__all__ = ["Audio", "TurnStarted", "TurnStopped", "IdleTimeout", "Step", "AudioIntake"]


@dataclass(frozen=True, eq=False)
class Audio:
    """16 kHz samples for the open item."""

    samples: np.ndarray


@dataclass(frozen=True)
class TurnStarted:
    at: int  # stream sample where the turn's audio begins (prefix padding included)


@dataclass(frozen=True)
class TurnStopped:
    at: int  # stream sample where speech ended


@dataclass(frozen=True)
class IdleTimeout:
    start: int  # stream sample where the silence began
    end: int  # stream sample where it reached the idle timeout


Step = Audio | TurnStarted | TurnStopped | IdleTimeout


class AudioIntake:
    """See the module docstring. ``vad_factory`` makes the VAD scorer (default: Silero)."""

    def __init__(self, fmt: AudioFormat, vad_factory: Callable[[], SpeechProbability] | None):
        self.decoder = WireDecoder(fmt)
        self.gate: SpeechGate | None = None
        self.samples = 0
        self.idle_timeout_ms: int | None = None
        self._idle_from: int | None = None
        self._vad_factory = vad_factory
        self._scorer: SpeechProbability | None = None

    @property
    def padding_ms(self) -> int:
        """The prefix padding the VAD may release at a turn's start (0 without VAD)."""
        return self.gate.settings.prefix_padding_ms if self.gate is not None else 0

    # --- format ------------------------------------------------------------------------------

    def restart_decoder(self, fmt: AudioFormat) -> np.ndarray:
        """Start a decoder for ``fmt``; returns the old one's held-back tail (16 kHz)."""
        tail = self.decoder.flush()
        self.decoder = WireDecoder(fmt)
        return tail

    # --- turn detection ----------------------------------------------------------------------

    def scorer_for(self, settings: TurnDetectorSettings | None) -> SpeechProbability | None:
        """The scorer a new gate needs (None when there is a gate, or no VAD is asked for).

        This is the step of an update that can fail (``vad_unavailable``), so it runs first.
        """
        if settings is None or self.gate is not None:
            return None
        if self._scorer is not None:
            self._scorer.reset()
            return self._scorer
        try:
            if self._vad_factory is not None:
                self._scorer = self._vad_factory()
            else:
                from desktop_rt.engine.audio.vad import SileroProbability

                self._scorer = SileroProbability()
        except Exception as exc:  # any failure to load the VAD is reported
            raise ProtocolError(
                f"server_vad is unavailable on this server ({exc}); set turn_detection to null and "
                "commit manually",
                code="vad_unavailable",
                param="session.audio.input.turn_detection",
                type="server_error",
            ) from None
        return self._scorer

    def set_turns(
        self, settings: TurnDetectorSettings | None, scorer: SpeechProbability | None
    ) -> np.ndarray:
        """Turn detection on (a gate with ``scorer``, or new settings for the gate) or off;
        returns the audio the gate held, for the open item, when it is turned off."""
        held = np.zeros(0, dtype=np.float32)
        if settings is None:
            if self.gate is not None:
                held = self.gate.take_held()  # without VAD, the open item holds all audio
            self.gate = None
            self._idle_from = None
        elif scorer is not None:
            self.gate = SpeechGate(scorer, settings, self.samples)
            self._idle_from = self.samples
        elif self.gate is not None:
            self.gate.settings = settings
        return held

    def reset(self) -> None:
        """The open item was cleared: the VAD and the decoder start over; silence starts now."""
        if self.gate is not None:
            self.gate.reset()
            self._idle_from = self.samples
        self.decoder = WireDecoder(self.decoder.format)

    # --- audio -------------------------------------------------------------------------------

    def decode(self, raw: bytes) -> list[Step]:
        return self.feed(self.decoder.decode(raw))

    def feed(self, samples: np.ndarray) -> list[Step]:
        """Decoded 16 kHz audio: to the open item, or through the server VAD and idle timer."""
        self.samples += len(samples)
        if self.gate is None:
            return [Audio(samples)]
        steps: list[Step] = []
        for kind, value in self.gate.process(samples):
            if kind == "audio":
                assert isinstance(value, np.ndarray)
                steps.append(Audio(value))
            elif kind == "started":
                assert isinstance(value, int)
                self._idle_from = None
                steps.append(TurnStarted(value))
            else:
                assert isinstance(value, int)
                self._idle_from = value
                steps.append(TurnStopped(value))
        timeout = self._idle_timeout()
        if timeout is not None:
            steps.append(timeout)
        return steps

    def _idle_timeout(self) -> IdleTimeout | None:
        if self.idle_timeout_ms is None or self._idle_from is None or self.gate is None:
            return None
        if self.gate.in_speech:
            return None
        end = self._idle_from + round(self.idle_timeout_ms * SAMPLE_RATE / 1000)
        if self.samples < end:
            return None
        start, self._idle_from = self._idle_from, None
        return IdleTimeout(start, end)

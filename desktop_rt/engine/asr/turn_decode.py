"""A turn decoded whole once it ends: :class:`TurnAudio` keeps it, :func:`decode_turn` hears it.

A *turn* is the audio a streaming transcriber took in since its last ``finish`` or ``clear``
(one realtime item: a push-to-talk hold, a server-VAD turn, a commit). :class:`TurnAudio`
keeps it while it fits the backend's window, with the speech gate's score of each of its
frames; :meth:`TurnAudio.end` hands it over as an :class:`EndedTurn` and starts the next.
:func:`decode_turn` recognises an ended turn exactly as offline recognition does a file
(:class:`~desktop_rt.engine.asr.file_transcriber.FileTranscriber`: speech windows, the speech
after a decoder's early stop heard again, runaway text dropped), its speech told by the scores
the gate already made (no frame is scored twice). Its words are the turn's completed
transcript (docs/design/streaming.md, *Whole-turn decode*). Times are stream seconds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.backend import AsrBackend
from desktop_rt.engine.asr.file_transcriber import FileOptions, FileTranscriber
from desktop_rt.engine.asr.file_windows import WindowOptions
from desktop_rt.engine.audio.vad import FRAME_SAMPLES, SpeechProbability

__all__ = ["EndedTurn", "TurnAudio", "decode_turn"]


@dataclass(frozen=True)
class EndedTurn:
    """One ended turn: its audio from stream time ``start`` and each frame's speech score."""

    audio: np.ndarray
    start: float
    scores: tuple[float, ...] | None
    """The gate's speech probability of each 512-sample frame of ``audio`` (``audio`` holds
    exactly those frames); ``None``: no speech gate, so all of it counts as speech."""

    @property
    def seconds(self) -> float:
        return len(self.audio) / SAMPLE_RATE


class TurnAudio:
    """The turn in progress. ``limit``: the most seconds kept (past it the turn is not decoded
    whole and its audio is let go); ``gated``: the speech gate scores its frames (else all of
    it is speech).

    Call order: ``begin`` before a turn's first ``append`` (while ``started`` is False), then
    ``append`` its audio and ``scored`` the gate's frames as they come, ``heard_speech`` when
    the gate hears speech; ``end`` (or ``drop``) when the turn ends.
    """

    def __init__(self, limit: float, gated: bool):
        self._limit = int(limit * SAMPLE_RATE)
        self._gated = gated
        self._chunks: list[np.ndarray] = []
        self._samples = 0
        self._first = 0  # the stream sample the turn starts at
        self._scores: list[float] = []  # from the first gate frame that starts in the turn
        self._speech = False
        self._too_long = False
        self.started = False

    def begin(self, start: float) -> None:
        """A turn starts at stream time ``start``."""
        self.drop()
        self.started = True
        self._first = round(start * SAMPLE_RATE)

    def append(self, samples: np.ndarray) -> None:
        self._samples += len(samples)
        if self._samples > self._limit:
            self._too_long = True
            self._chunks, self._scores = [], []
        elif not self._too_long:
            self._chunks.append(samples)

    def scored(self, frames: Sequence[tuple[float, float]]) -> None:
        """The gate's ``(frame start, probability)`` pairs, in stream order."""
        if self._too_long:
            return
        for start, probability in frames:
            if round(start * SAMPLE_RATE) >= self._first:
                self._scores.append(probability)

    def heard_speech(self) -> None:
        """The gate heard speech in this turn."""
        self._speech = True

    def end(self) -> EndedTurn | None:
        """The turn just ended, if it can be decoded whole (it fit the limit and, with a gate,
        held speech); the next turn starts empty."""
        turn = None
        heard = not self._gated or self._speech
        if self.started and self._chunks and not self._too_long and heard:
            turn = self._ended(np.concatenate(self._chunks))
        self.drop()
        return turn

    def _ended(self, audio: np.ndarray) -> EndedTurn:
        if not self._gated:
            return EndedTurn(audio, self._first / SAMPLE_RATE, None)
        skip = math.ceil(self._first / FRAME_SAMPLES) * FRAME_SAMPLES - self._first
        frames = min(len(self._scores), (len(audio) - skip) // FRAME_SAMPLES)
        audio = audio[skip : skip + frames * FRAME_SAMPLES]
        return EndedTurn(audio, (self._first + skip) / SAMPLE_RATE, tuple(self._scores[:frames]))

    def drop(self) -> None:
        """Forget the turn in progress."""
        self._chunks, self._scores, self._samples = [], [], 0
        self._too_long = self._speech = self.started = False


class _Replayed:
    """A :class:`SpeechProbability` that gives back scores already made, frame by frame (all
    frames are speech when there are none)."""

    def __init__(self, scores: tuple[float, ...] | None):
        self._scores = scores
        self._next = 0

    def __call__(self, frame: np.ndarray) -> float:
        if self._scores is None:
            return 1.0
        i, self._next = self._next, self._next + 1
        return self._scores[i] if i < len(self._scores) else 0.0

    def reset(self) -> None:
        self._next = 0


def decode_turn(
    backend: AsrBackend,
    turn: EndedTurn,
    *,
    prompt: str | None,
    language: str | None,
    threshold: float,
) -> list[Word]:
    """The words of ``turn`` in stream time, recognised as offline recognition does a file:
    :class:`FileTranscriber` with ``prompt`` (the user's, not the text streamed before: a
    streamed misspelling in the prompt is copied), ``language`` (``None``: detected), and the
    gate's scores at ``threshold`` for where the speech is. Runs on the calling thread (the
    windows are planned on a short-lived thread of the file transcriber's)."""

    def scorer() -> SpeechProbability:
        return _Replayed(turn.scores)

    # streaming's context, not the full one: a decode's CPU delays the passes after it
    options = FileOptions(windows=WindowOptions(threshold=threshold), whole_windows=False)
    transcriber = FileTranscriber(
        backend, language=language, prompt=prompt, options=options, scorer=scorer
    )
    result = transcriber.transcribe([turn.audio])
    return [w.shifted(turn.start) for w in result.words]

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

from collections import deque
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
    """One ended turn: audio from stream time ``start`` and each frame's speech score; its
    first ``context`` seconds came before the turn (heard with it, not written)."""

    audio: np.ndarray
    start: float
    scores: tuple[float, ...] | None
    """The gate's speech probability of each 512-sample frame of ``audio`` (``audio`` holds
    exactly those frames); ``None``: no speech gate, so all of it counts as speech."""
    context: float = 0.0

    @property
    def seconds(self) -> float:
        return len(self.audio) / SAMPLE_RATE

    @property
    def turn_start(self) -> float:
        """Stream time where the turn itself starts (after its context)."""
        return self.start + self.context


class TurnAudio:
    """The turn in progress, and the audio just before it. ``limit``: the most seconds of a
    turn kept (past it the turn is not decoded whole and its audio is let go); ``gated``: the
    speech gate scores its frames (else all of it is speech); ``context``: seconds of the audio
    taken in before the turn that are heard with it (Whisper reads a turn better with the speech
    before it: docs/design/streaming.md, *Whole-turn decode*).

    Call order: ``begin`` before a turn's first ``append`` (while ``started`` is False), then
    ``append`` its audio and ``scored`` the gate's frames as they come, ``heard_speech`` when
    the gate hears speech; ``end`` (or ``drop``) when the turn ends. Holds at most ``limit``
    plus ``context`` seconds of audio.
    """

    def __init__(self, limit: float, gated: bool, context: float = 0.0):
        self._limit = int(limit * SAMPLE_RATE)
        self._gated = gated
        self._context = int(context * SAMPLE_RATE)
        self._chunks: deque[tuple[int, np.ndarray]] = deque()  # (first stream sample, audio)
        self._scores: deque[tuple[int, float]] = deque()  # (gate frame index, probability)
        self._next = 0  # the stream sample after the last one appended
        self._first = 0  # the stream sample the turn starts at
        self._speech = False
        self._too_long = False
        self.started = False

    def begin(self, start: float) -> None:
        """A turn starts at stream time ``start``."""
        self.drop()
        self.started = True
        self._first = round(start * SAMPLE_RATE)
        if self._first != self._next:  # audio was taken in that this object did not see
            self._chunks.clear()
            self._scores.clear()
            self._next = self._first

    def append(self, samples: np.ndarray) -> None:
        self._chunks.append((self._next, samples))
        self._next += len(samples)
        if self._next - self._first > self._limit:
            self._too_long = True
        self._forget()

    def scored(self, frames: Sequence[tuple[float, float]]) -> None:
        """The gate's ``(frame start, probability)`` pairs, in stream order."""
        for start, probability in frames:
            self._scores.append((round(start * SAMPLE_RATE) // FRAME_SAMPLES, probability))
        self._forget()

    def heard_speech(self) -> None:
        """The gate heard speech in this turn."""
        self._speech = True

    def end(self) -> EndedTurn | None:
        """The turn just ended, if it can be decoded whole (it fit the limit and, with a gate,
        held speech); the next turn starts empty."""
        turn = None
        heard = not self._gated or self._speech
        if self.started and self._next > self._first and not self._too_long and heard:
            turn = self._ended()
        self.drop()
        return turn

    def drop(self) -> None:
        """Forget the turn in progress (the audio before it is kept as the next one's context)."""
        self._too_long = self._speech = self.started = False
        self._first = self._next
        self._forget()

    def _forget(self) -> None:
        """Let go of audio and scores older than the context of the turn (or of the next)."""
        keep = (self._next if self._too_long or not self.started else self._first) - self._context
        while self._chunks and self._chunks[0][0] + len(self._chunks[0][1]) <= keep:
            self._chunks.popleft()
        while self._scores and (self._scores[0][0] + 1) * FRAME_SAMPLES <= keep:
            self._scores.popleft()

    def _ended(self) -> EndedTurn:
        held = self._chunks[0][0]
        audio = np.concatenate([chunk for _, chunk in self._chunks])
        first = max(held, self._first - self._context)  # the context's first sample
        if not self._gated:
            context = (self._first - first) / SAMPLE_RATE
            return EndedTurn(audio[first - held :], first / SAMPLE_RATE, None, context)
        turn_frame = -(-self._first // FRAME_SAMPLES)  # the first frame that starts in the turn
        by_frame = dict(self._scores)
        frame = -(-first // FRAME_SAMPLES)
        if frame not in by_frame:  # the context was not scored: the turn alone
            frame = turn_frame
        whole = self._next // FRAME_SAMPLES  # frames held whole
        scores: list[float] = []  # each whole frame's, as far as they run unbroken
        for k in range(frame, whole):
            if k not in by_frame:
                break
            scores.append(by_frame[k])
        skip = frame * FRAME_SAMPLES - held
        audio = audio[skip : skip + len(scores) * FRAME_SAMPLES]
        context = (turn_frame - frame) * FRAME_SAMPLES / SAMPLE_RATE
        return EndedTurn(audio, frame * FRAME_SAMPLES / SAMPLE_RATE, tuple(scores), context)


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
    gate's scores at ``threshold`` for where the speech is. The turn's context is heard with it
    and its words are not returned: those that end before the turn starts (they were the turn
    before's; a word's start is no guide: Whisper stretches the first word after a pause back
    over it, across a pause the windows left out too). Runs on the calling thread (the windows
    are planned on a short-lived thread of the file transcriber's)."""

    def scorer() -> SpeechProbability:
        return _Replayed(turn.scores)

    # streaming's context, not the full one: a decode's CPU delays the passes after it
    options = FileOptions(windows=WindowOptions(threshold=threshold), whole_windows=False)
    transcriber = FileTranscriber(
        backend, language=language, prompt=prompt, options=options, scorer=scorer
    )
    result = transcriber.transcribe([turn.audio])
    ours = [w for w in result.words if w.end > turn.context]
    return [w.shifted(turn.start) for w in ours]

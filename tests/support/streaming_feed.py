"""Feeding a StreamingTranscriber in tests, and the small backends its tests script.

:func:`stream` and :func:`feed_audio` push audio in 100 ms chunks (:data:`CHUNK`);
:func:`feed_silence` pushes silent chunks; :func:`ramp_audio` is audio that carries its own
stream position; :func:`timed_words` lays words out on a grid. :class:`HypothesisScript`
answers each window with the next hypothesis of a script.
"""

from __future__ import annotations

import numpy as np

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.agreement import StreamUpdate
from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.streaming import StreamingTranscriber

__all__ = [
    "CHUNK",
    "HypothesisScript",
    "feed_audio",
    "feed_silence",
    "ramp_audio",
    "stream",
    "timed_words",
]

CHUNK = 1600  # 100 ms


def stream(
    transcriber: StreamingTranscriber, audio: np.ndarray
) -> tuple[list[Word], list[StreamUpdate]]:
    """Feed ``audio`` in 100 ms chunks; return (committed words, every update)."""
    committed: list[Word] = []
    updates: list[StreamUpdate] = []
    for i in range(0, len(audio), CHUNK):
        transcriber.insert_audio(audio[i : i + CHUNK])
        update = transcriber.process()
        updates.append(update)
        committed.extend(update.committed)
    final = transcriber.finish()
    updates.append(final)
    committed.extend(final.committed)
    return committed, updates


def feed_audio(tr: StreamingTranscriber, audio: np.ndarray) -> list[Word]:
    """Feed ``audio`` in 100 ms chunks, a pass due after each; the words committed (no finish)."""
    committed: list[Word] = []
    for i in range(0, len(audio), CHUNK):
        tr.insert_audio(audio[i : i + CHUNK])
        committed += tr.process().committed
    return committed


def feed_silence(tr: StreamingTranscriber, seconds: float) -> list[Word]:
    """Feed ``seconds`` of silence in 100 ms chunks; the words committed (no finish)."""
    committed: list[Word] = []
    for _ in range(int(seconds * 10)):
        tr.insert_audio(np.zeros(CHUNK, dtype=np.float32))
        committed += tr.process().committed
    return committed


def ramp_audio(seconds: float) -> np.ndarray:
    """Audio whose every sample holds its own index (over 10**6)."""
    return (np.arange(int(seconds * 16000)) / 1e6).astype(np.float32)


def timed_words(text: str, step: float = 0.3) -> list[Word]:
    """The words of ``text``, one every ``step`` seconds from 0, each 0.9 of a step long."""
    return [Word(" " + t, i * step, i * step + step * 0.9) for i, t in enumerate(text.split())]


class HypothesisScript:
    """Returns the next hypothesis of a script for each window (times on a 0.1 s grid)."""

    traits = BackendTraits()
    detected_language = None

    def __init__(self, script: list[list[str]]):
        self.script = script
        self.calls = 0

    def transcribe(
        self, audio: np.ndarray, *, prompt: str | None = None, language: str | None = None
    ) -> list[Word]:
        pieces = self.script[min(self.calls, len(self.script) - 1)]
        self.calls += 1
        return [Word(t, 0.1 * i, 0.1 * i + 0.08) for i, t in enumerate(pieces)]

    def close(self) -> None:
        pass

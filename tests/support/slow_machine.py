"""A slower machine, simulated on a virtual clock: costed backends and a worker driven by events.

:class:`VirtualClock` is the worker's clock; a :class:`CostedBackend` wraps any backend and
advances that clock by what a pass would cost on a machine ``factor`` times slower than the
:func:`base_cost` (no real sleeps). :class:`Simulation` feeds streams their audio at virtual
times (real time, or faster for a flooder), runs the worker's turns as they fall due and
records what came out when: committed words, lags, and every pass's busy span.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.backend import AsrBackend, BackendTraits, DetectedLanguage
from desktop_rt.engine.asr.worker import (
    FlushedResult,
    InferenceWorker,
    WordsResult,
    WorkerResult,
    WorkerStream,
)
from desktop_rt.engine.protocol.events import AudioChunk, Flush
from tests.support.scripted_backend import Truth, TruthWord, word_ids

__all__ = [
    "VirtualClock",
    "CostedBackend",
    "Simulation",
    "SimStream",
    "base_cost",
    "max_busy",
    "speech_truth",
]


class VirtualClock:
    """Wall and CPU time that move only when told to (every second of it is busy CPU)."""

    def __init__(self) -> None:
        self.t = 0.0
        self.cpu = 0.0

    def now(self) -> float:
        return self.t

    def thread_time(self) -> float:
        return self.cpu

    def spend(self, seconds: float) -> None:
        self.t += seconds
        self.cpu += seconds


def base_cost(window_seconds: float) -> float:
    """A pass of Whisper base int8 on two cores, roughly: a fixed encoder and decoder part,
    and a little per second of window."""
    return 0.18 + 0.012 * window_seconds


@dataclass
class CostedBackend:
    """``inner``, each pass costing ``factor * cost(window seconds)`` of the clock's time (or
    ``factor`` times what it really took, with ``measured``)."""

    inner: AsrBackend
    clock: VirtualClock
    factor: float = 1.0
    cost: Callable[[float], float] = base_cost
    measured: bool = False
    """Cost what the inner pass really took (times ``factor``) instead of ``cost``."""
    spans: list[tuple[float, float]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def traits(self) -> BackendTraits:
        return self.inner.traits

    @property
    def detected_language(self) -> DetectedLanguage | None:
        return self.inner.detected_language

    def transcribe(
        self,
        audio: np.ndarray,
        *,
        prompt: str | None = None,
        language: str | None = None,
        prefix: str | None = None,
        **options: Any,
    ) -> Sequence[Word]:
        start, real = self.clock.now(), time.perf_counter()
        words = self.inner.transcribe(
            audio, prompt=prompt, language=language, prefix=prefix, **options
        )
        took = time.perf_counter() - real if self.measured else self.cost(len(audio) / SAMPLE_RATE)
        self.clock.spend(self.factor * took)
        self.spans.append((start, self.clock.now()))
        return words

    def close(self) -> None:
        self.inner.close()


def speech_truth(seconds: float) -> Truth:
    """Words of 0.3 s, 0.1 s apart, in sentences of nine; every other sentence ends in a 1.2 s
    pause (an endpoint), the others run on."""
    words: list[TruthWord] = []
    t, i = 0.5, 0
    while t < seconds - 1.5:
        end = i % 9 == 8
        words.append(TruthWord(i, t, t + 0.3, sentence_end=end))
        t += 0.4 + (1.2 if end and i % 2 else 0.0)
        i += 1
    return Truth(tuple(words))


def max_busy(spans: Sequence[tuple[float, float]], window: float) -> float:
    """The most busy time of ``spans`` within any ``window`` seconds (it peaks with a window
    starting where a span starts or ending where one ends)."""
    edges = [s for s, _ in spans] + [e - window for _, e in spans]
    best = 0.0
    for a in edges:
        b = a + window
        best = max(best, sum(max(0.0, min(e, b) - max(s, a)) for s, e in spans))
    return best


@dataclass
class SimStream:
    """One stream of the simulation: its audio, pace (1.0 real time) and what it got."""

    audio: np.ndarray
    pace: float = 1.0
    chunk_seconds: float = 0.1
    start: float = 0.0
    stream: WorkerStream | None = None
    sent: int = 0
    committed: list[tuple[Word, float]] = field(default_factory=list)
    """Each committed word with the virtual time it came."""
    lags: list[tuple[float, float]] = field(default_factory=list)
    """Its lag (audio seconds waiting) at virtual times: ``(time, lag)``."""
    flushed: bool = False

    def on_result(self, clock: VirtualClock) -> Callable[[WorkerResult], None]:
        def take(result: WorkerResult) -> None:
            if isinstance(result, (WordsResult, FlushedResult)):
                self.committed += [(w, clock.now()) for w in result.committed]
            if isinstance(result, FlushedResult):
                self.flushed = True

        return take

    def max_lag(self, since: float = 0.0, until: float = float("inf")) -> float:
        return max((lag for t, lag in self.lags if since <= t < until), default=0.0)

    def word_indices(self) -> list[int]:
        """The truth words its committed words stand for, in the order they came."""
        return [i for word, _ in self.committed for _, i in word_ids(word.text)]

    def latencies(self, truth: Truth) -> list[float]:
        """For each committed word, seconds from the end of its audio to its commit (real-time
        streams only: stream seconds are virtual seconds from its start)."""
        ends = {w.index: w.end for w in truth.words}
        return [
            at - self.start - ends[ids[0][1]] / self.pace
            for word, at in self.committed
            if (ids := word_ids(word.text))
        ]

    def next_send(self) -> float | None:
        """Virtual time the next chunk is sent (``None``: all sent)."""
        if self.sent >= len(self.audio):
            return None
        step = self.chunk_seconds * SAMPLE_RATE
        return self.start + (self.sent + step) / SAMPLE_RATE / self.pace


class Simulation:
    """Runs ``streams`` through ``worker`` (started with ``own_thread=False``) on ``clock``."""

    def __init__(self, worker: InferenceWorker, clock: VirtualClock, streams: list[SimStream]):
        self.worker, self.clock, self.streams = worker, clock, streams
        for s in streams:
            s.stream = worker.open_stream(s.on_result(clock))

    def run(self, limit: float = 3600.0) -> None:
        """Until every stream sent its audio, flushed, and got its flush answered."""
        clock = self.clock
        while not all(s.flushed for s in self.streams):
            assert clock.now() < limit, "the simulation did not finish"
            self._send_due()
            due = self.worker.run_due_turn()
            if due is not None and due <= clock.now():
                continue  # a turn ran
            sends = [t for s in self.streams if (t := s.next_send()) is not None]
            wake = min([*sends, *([due] if due is not None else [])], default=None)
            assert wake is not None, "nothing is due and nothing will be sent"
            clock.t = max(clock.t, wake)

    def _send_due(self) -> None:
        for s in self.streams:
            assert s.stream is not None
            while (t := s.next_send()) is not None and t <= self.clock.now() + 1e-9:
                step = int(s.chunk_seconds * SAMPLE_RATE)
                s.stream.submit([AudioChunk("item", s.audio[s.sent : s.sent + step])])
                s.sent += step
                if s.sent >= len(s.audio):
                    s.stream.submit([Flush("item", final=True)])
            s.lags.append((self.clock.now(), s.stream.lag_seconds))

"""Several streams on one worker, each in turns that a flush ends (as server_vad ends them), on
a virtual clock: every whole-turn decode noted with what the other streams were doing then.

:func:`run_turns` opens one :class:`TurnStream` per stream on an :class:`InferenceWorker`
driven on a :class:`~tests.support.slow_machine.VirtualClock`, sends each its audio at real time
in 100 ms chunks with a ``Flush`` at each of its ``flush_at`` stream times (then at its end),
runs the worker's turns as they fall due and returns a :class:`TurnRun`: each stream's
results with the time they came, each decode as a :class:`DecodeSpan`, each model pass's span.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.agreement import StreamUpdate
from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from desktop_rt.engine.asr.worker import (
    FlushedResult,
    InferenceWorker,
    WordsResult,
    WorkerConfig,
    WorkerResult,
    WorkerStream,
)
from desktop_rt.engine.protocol.events import AudioChunk, Flush
from tests.support.scripted_backend import (
    ScriptedBackend,
    Truth,
    TruthSpeech,
    TruthWord,
    ramp,
    word_ids,
)
from tests.support.slow_machine import CostedBackend, VirtualClock

__all__ = ["DecodeSpan", "TurnRun", "TurnStream", "pause_flushes", "paused_truth", "run_turns"]

CHUNK = SAMPLE_RATE // 10


@dataclass(frozen=True)
class DecodeSpan:
    """One whole-turn decode of stream ``name``: it began at ``start`` and ended at ``end``;
    its flush's ``finish`` ended at ``flushed`` on a turn of ``turn_seconds``; ``others_lag``:
    every other stream's audio waiting when it began."""

    name: str
    start: float
    end: float
    flushed: float
    turn_seconds: float
    others_lag: dict[str, float]

    @property
    def waited(self) -> float:
        return self.start - self.flushed


@dataclass
class TurnStream:
    """One stream: its audio from virtual time ``start``, ending an item at each of
    ``flush_at`` (stream seconds), and what came back."""

    audio: np.ndarray
    flush_at: list[float]
    start: float = 0.0
    stream: WorkerStream | None = None
    sent: int = 0
    item: int = 0
    item_start: int = 0  # the sample the current item began at
    items: list[tuple[str, float]] = field(default_factory=list)
    """Each flushed item and its length in seconds, in order."""
    results: list[tuple[WorkerResult, float]] = field(default_factory=list)
    done: bool = False

    def flushed(self) -> list[FlushedResult]:
        return [r for r, _ in self.results if isinstance(r, FlushedResult)]

    def final_indices(self) -> list[int]:
        """The truth words of every item's decode, item after item."""
        return [i for r in self.flushed() for w in r.final or () for _, i in word_ids(w.text)]

    def committed_indices(self) -> list[int]:
        said = [r for r, _ in self.results if isinstance(r, (WordsResult, FlushedResult))]
        return [i for r in said for w in r.committed for _, i in word_ids(w.text)]

    def latencies(self, truth: Truth) -> list[float]:
        """For each committed word, seconds from the end of its audio to its delta."""
        ends = {w.index: w.end for w in truth.words}
        return [
            at - self.start - ends[ids[0][1]]
            for r, at in self.results
            if isinstance(r, (WordsResult, FlushedResult))
            for w in r.committed
            if (ids := word_ids(w.text))
        ]


class _Watched(StreamingTranscriber):
    """The real transcriber, noting when its ``finish`` ends and each decode it runs."""

    def __init__(self, run: TurnRun, backend: CostedBackend, truth: Truth, whole: bool):
        config = StreamingConfig(turn_decode=whole)
        super().__init__(backend, config, TruthSpeech(truth))
        self._run, self._clock = run, backend.clock
        self.name = ""
        self._finished = (0.0, 0.0)

    def finish(self) -> StreamUpdate:
        update = super().finish()
        turn = self._ended
        self._finished = (self._clock.now(), 0.0 if turn is None else turn.seconds)
        return update

    def decode_turn(self) -> tuple[Word, ...] | None:
        start = self._clock.now()
        lags = {k: v for k, v in self._run.worker.lags().items() if k != self.name}
        try:
            return super().decode_turn()
        finally:
            flushed, seconds = self._finished
            span = DecodeSpan(self.name, start, self._clock.now(), flushed, seconds, lags)
            self._run.decodes.append(span)


@dataclass
class TurnRun:
    """What a run of :func:`run_turns` did."""

    worker: InferenceWorker
    clock: VirtualClock
    backend: CostedBackend
    streams: list[TurnStream]
    decodes: list[DecodeSpan] = field(default_factory=list)

    def pass_spans(self) -> list[tuple[float, float]]:
        """Every backend call that was not part of a decode."""
        inside = [(d.start, d.end) for d in self.decodes]
        return [(s, e) for s, e in self.backend.spans if not any(a <= s < b for a, b in inside)]


def paused_truth(seconds: float, pause: float) -> Truth:
    """Sentences of nine words of 0.3 s, 0.1 s apart, each followed by ``pause`` seconds of
    silence."""
    words: list[TruthWord] = []
    t, i = 0.5, 0
    while t < seconds - pause:
        end = i % 9 == 8
        words.append(TruthWord(i, t, t + 0.3, sentence_end=end))
        t += 0.4 + (pause if end else 0.0)
        i += 1
    return Truth(tuple(words))


def pause_flushes(truth: Truth, after: float = 0.8, pause: float = 1.0) -> list[float]:
    """Where server_vad would end turns: ``after`` seconds past each sentence end followed by
    a pause of at least ``pause`` seconds."""
    words = truth.words
    return [
        w.end + after
        for w, nxt in zip(words, words[1:], strict=False)
        if w.sentence_end and nxt.start - w.end >= pause
    ]


def run_turns(
    truth: Truth,
    seconds: float,
    starts: list[float],
    factor: float,
    cost: Callable[[float], float],
    config: WorkerConfig | None = None,
    flushing: list[bool] | None = None,
    whole_turns: list[bool] | None = None,
) -> TurnRun:
    """One stream per ``starts`` entry, all saying ``truth`` at real time; stream ``k`` ends
    turns at its pauses where ``flushing[k]`` (default: all), else only at its end, and its
    turns are decoded whole where ``whole_turns[k]`` (default: all; meeting mode's microphone
    is not)."""
    clock = VirtualClock()
    traits = BackendTraits(window_seconds=30.0)
    backend = CostedBackend(ScriptedBackend(truth, traits=traits), clock, factor, cost=cost)
    config = config or WorkerConfig()
    worker = InferenceWorker(lambda: StreamingTranscriber(backend), config, clock=clock)
    worker.start(own_thread=False)
    audio = ramp(0, int(seconds * SAMPLE_RATE))
    flushes = pause_flushes(truth)
    flushing = flushing or [True] * len(starts)
    streams = [
        TurnStream(audio, flushes if f else [], s) for s, f in zip(starts, flushing, strict=True)
    ]
    run = TurnRun(worker, clock, backend, streams)
    for s, whole in zip(streams, whole_turns or [True] * len(starts), strict=True):
        transcriber = _Watched(run, backend, truth, whole)
        s.stream = worker.open_stream(_collector(s, clock), transcriber)
        transcriber.name = s.stream.name
    _drive(run)
    worker.stop()
    return run


def _collector(s: TurnStream, clock: VirtualClock) -> Callable[[WorkerResult], None]:
    def take(result: WorkerResult) -> None:
        s.results.append((result, clock.now()))
        if isinstance(result, FlushedResult) and result.item_id == s.items[-1][0]:
            s.done = s.sent >= len(s.audio)

    return take


def _drive(run: TurnRun, limit: float = 3600.0) -> None:
    clock, worker = run.clock, run.worker
    while not all(s.done for s in run.streams):
        assert clock.now() < limit, "the simulation did not finish"
        for s in run.streams:
            _send_due(s, clock.now())
        due = worker.run_due_turn()
        if due is not None and due <= clock.now():
            continue  # a turn ran
        sends = [_next_send(s) for s in run.streams if s.sent < len(s.audio)]
        wake = min([*sends, *([due] if due is not None else [])], default=None)
        assert wake is not None, "nothing is due and nothing will be sent"
        clock.t = max(clock.t, wake)


def _next_send(s: TurnStream) -> float:
    return s.start + (s.sent + CHUNK) / SAMPLE_RATE


def _send_due(s: TurnStream, now: float) -> None:
    assert s.stream is not None
    while s.sent < len(s.audio) and _next_send(s) <= now + 1e-9:
        item = f"item-{s.item}"
        s.stream.submit([AudioChunk(item, s.audio[s.sent : s.sent + CHUNK])])
        s.sent += CHUNK
        last = s.sent >= len(s.audio)
        if last or (s.item < len(s.flush_at) and s.sent / SAMPLE_RATE >= s.flush_at[s.item]):
            s.items.append((item, (s.sent - s.item_start) / SAMPLE_RATE))
            s.stream.submit([Flush(item, final=last)])
            s.item, s.item_start = s.item + 1, s.sent

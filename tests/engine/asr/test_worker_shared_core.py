"""The inference worker on a core it shares: its budget counts CPU, not waiting for a core.

A virtual clock whose inference thread gets only part of a core while a pass runs (the server
thread and other sessions' work take the rest, as on a real machine with several sessions):
each pass's wall time is longer than its CPU time. The budget (0.8 of the inference thread
over any 10 s) must hold on CPU, and the worker must not sit idle for time that was never its
own. No real sleeps, no timed assertions.
"""

from __future__ import annotations

import statistics

import pytest

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from desktop_rt.engine.asr.worker import InferenceWorker, WorkerConfig
from tests.support.scripted_backend import ScriptedBackend, Truth, TruthSpeech, ramp
from tests.support.slow_machine import (
    CostedBackend,
    SimStream,
    Simulation,
    VirtualClock,
    max_busy,
    speech_truth,
)

SHARE = 0.7  # of a core the inference thread gets while a pass runs


class SharedCoreClock(VirtualClock):
    """A pass's wall seconds pass in full; its thread's CPU seconds at ``share`` of them."""

    def __init__(self, share: float) -> None:
        super().__init__()
        self.share = share

    def spend(self, seconds: float) -> None:
        self.t += seconds
        self.cpu += self.share * seconds


def window_cost(window_seconds: float) -> float:
    """A pass of Whisper base by its window (as in test_worker_governor)."""
    return 0.15 + 0.05 * window_seconds


def run(truth: Truth, count: int, factor: float, share: float, seconds: float = 60.0):
    clock = SharedCoreClock(share)
    backend = CostedBackend(ScriptedBackend(truth), clock, factor, cost=window_cost)
    worker = InferenceWorker(
        lambda: StreamingTranscriber(backend, StreamingConfig(), TruthSpeech(truth)),
        WorkerConfig(),
        clock=clock,
    )
    worker.start(own_thread=False)
    audio = ramp(0, int(seconds * SAMPLE_RATE))
    streams = [SimStream(audio) for _ in range(count)]
    Simulation(worker, clock, streams).run()
    worker.stop()
    cpu_spans = [(e - share * (e - s), e) for s, e in backend.spans]
    return streams, backend.spans, cpu_spans


@pytest.mark.parametrize(("count", "factor"), [(2, 1.0), (3, 1.0), (2, 1.5)])
def test_the_budget_holds_on_cpu_and_the_worker_does_not_idle_for_time_not_its_own(count, factor):
    """Today's streams at real time on a core the thread gets 70% of: the CPU the passes
    take stays within 0.8 of every 10 s, while the worker's wall time may fill it. Counting
    wall time, the worker kept itself idle 20% of the time besides the 30% others took:
    wall busy at most 8.0 s of 10 (CPU 5.7 s), two streams' worst median 2.59 s (1.65 s now),
    three 3.98 s (3.03 s)."""
    truth = speech_truth(60.0)
    streams, wall_spans, cpu_spans = run(truth, count, factor, SHARE)
    every = [w.index for w in truth.words]
    for stream in streams:
        assert stream.word_indices() == every  # once each, in order, none skipped
    assert max_busy(cpu_spans, 10.0) <= 0.8 * 10.0 + 0.05
    assert max_busy(wall_spans, 10.0) > 0.8 * 10.0 + 1.0  # the rest was others' work


def test_on_a_shared_core_streams_wait_less_than_when_waiting_for_a_core_was_charged():
    """The same two streams, their passes taking the same wall time, with the thread on a
    whole core and on 70% of one: passes that used less of the budget leave room for more, so
    words wait less and lag is shorter. Counting wall time, both runs were the same: worst
    median 2.59 s and 3.7 s behind (1.65 s and 1.2 s now, on the shared core)."""
    truth = speech_truth(60.0)
    whole, _, _ = run(truth, 2, 1.0, 1.0)
    shared, _, _ = run(truth, 2, 1.0, SHARE)
    worst_whole = max(statistics.median(s.latencies(truth)) for s in whole)
    worst_shared = max(statistics.median(s.latencies(truth)) for s in shared)
    assert worst_shared < worst_whole
    assert max(s.max_lag() for s in shared) < max(s.max_lag() for s in whole)

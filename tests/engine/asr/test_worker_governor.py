"""The inference worker under its compute governor, on simulated slower machines.

A virtual clock and a scripted backend whose passes cost what Whisper base's would on a machine
1.5, 2 or 3 times slower (:mod:`tests.support.slow_machine`): no real sleeps, no timed
assertions. What must hold: the budget over every 10 s, lag bounded, every word committed
exactly once and in order (nothing skipped), and a flooder kept to its share.
"""

from __future__ import annotations

import queue
import statistics
import time

import pytest

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from desktop_rt.engine.asr.worker import (
    FlushedResult,
    InferenceWorker,
    WordsResult,
    WorkerConfig,
)
from desktop_rt.engine.protocol.events import AudioChunk, Flush
from tests.support.clips import librivox_stream, wer
from tests.support.scripted_backend import ScriptedBackend, Truth, TruthSpeech, ramp, word_ids
from tests.support.slow_machine import (
    CostedBackend,
    SimStream,
    Simulation,
    VirtualClock,
    max_busy,
    speech_truth,
)

FACTORS = [1.0, 1.5, 2.0, 3.0]
DEFAULT = WorkerConfig()


def simulate(
    truth: Truth,
    factor: float,
    paces: list[float],
    seconds: float,
    config: WorkerConfig = DEFAULT,
) -> tuple[list[SimStream], CostedBackend]:
    clock = VirtualClock()
    backend = CostedBackend(ScriptedBackend(truth), clock, factor)
    worker = InferenceWorker(
        lambda: StreamingTranscriber(backend, StreamingConfig(), TruthSpeech(truth)),
        config,
        clock=clock,
    )
    worker.start(own_thread=False)
    audio = ramp(0, int(seconds * SAMPLE_RATE))
    streams = [SimStream(audio, pace=pace) for pace in paces]
    Simulation(worker, clock, streams).run()
    worker.stop()
    return streams, backend


def every_word(truth: Truth) -> list[int]:
    return [w.index for w in truth.words]


@pytest.mark.parametrize("factor", FACTORS)
def test_one_stream_keeps_the_budget_and_loses_nothing_on_a_slower_machine(factor):
    truth = speech_truth(60.0)
    [stream], backend = simulate(truth, factor, [1.0], 60.0)
    assert stream.word_indices() == every_word(truth)  # once each, in order, none skipped
    assert max_busy(backend.spans, 10.0) <= 0.8 * 10.0 + 0.05  # + one pass's estimate error
    assert stream.max_lag() <= 4.0


def test_a_slower_machine_gets_fewer_longer_passes_and_more_latency_not_errors():
    truth = speech_truth(60.0)
    runs = {f: simulate(truth, f, [1.0], 60.0) for f in (1.0, 3.0)}
    fast, slow = (runs[f][0][0] for f in (1.0, 3.0))
    assert len(runs[3.0][1].spans) < len(runs[1.0][1].spans)
    assert slow.stream is not None and fast.stream is not None
    assert slow.stream.passes < fast.stream.passes  # each pass took more audio in
    assert statistics.median(slow.latencies(truth)) > statistics.median(fast.latencies(truth))
    assert slow.word_indices() == fast.word_indices() == every_word(truth)


def test_the_budget_is_a_setting():
    truth = speech_truth(40.0)
    [stream], backend = simulate(truth, 2.0, [1.0], 40.0, WorkerConfig(cpu_budget=0.5))
    assert max_busy(backend.spans, 10.0) <= 0.5 * 10.0 + 0.05
    assert stream.word_indices() == every_word(truth)


@pytest.mark.parametrize("factor", [1.0, 1.5, 2.0])
def test_a_flooder_leaves_a_real_time_stream_its_latency(factor):
    truth = speech_truth(60.0)
    [solo], _ = simulate(truth, factor, [1.0], 60.0)
    (steady, flooder), backend = simulate(truth, factor, [1.0, 20.0], 60.0)
    alone = statistics.median(solo.latencies(truth))
    beside = statistics.median(steady.latencies(truth))
    assert beside <= 1.2 * alone, (alone, beside)
    assert steady.word_indices() == flooder.word_indices() == every_word(truth)
    assert max_busy(backend.spans, 10.0) <= 0.8 * 10.0 + 0.05


def test_where_one_stream_fills_the_budget_a_flood_yields_to_it():
    """At 3x a real-time stream alone fills the budget; the flood gets one pass per window and
    its passes (up to 1.4 s here) are what delays the other, never an equal split."""
    truth = speech_truth(60.0)
    [solo], _ = simulate(truth, 3.0, [1.0], 60.0)
    (steady, flooder), _ = simulate(truth, 3.0, [1.0, 20.0], 60.0)
    assert solo.stream is not None and steady.stream is not None
    assert steady.stream.passes >= 0.6 * solo.stream.passes
    alone = statistics.median(solo.latencies(truth))
    assert statistics.median(steady.latencies(truth)) <= 1.3 * alone
    assert steady.max_lag() <= 4.0
    assert steady.word_indices() == flooder.word_indices() == every_word(truth)


@pytest.mark.parametrize(("factor", "count"), [(1.0, 4), (2.0, 3)])
def test_several_real_time_streams_stay_a_bounded_lag_behind(factor, count):
    seconds = 150.0
    truth = speech_truth(seconds)
    streams, backend = simulate(truth, factor, [1.0] * count, seconds)
    for stream in streams:
        assert stream.word_indices() == every_word(truth)
        assert stream.max_lag() <= 6.0  # over 150 s: it does not grow with the stream
        assert stream.committed[-1][1] <= seconds + 6.0  # the last words came soon after
    assert max_busy(backend.spans, 10.0) <= 0.8 * 10.0 + 0.05


def test_the_real_model_on_a_machine_twice_as_slow_keeps_its_accuracy(whisper_backend):
    """Each pass of the real model costs twice what it took here: fewer, longer passes, no
    sentence lost. The bound allows Whisper base's streamed spelling of "ill-disposed" as
    "ild-sposed" (two words, twice: 0.06); the clip's shortest sentence is 8 words (0.11).
    Lag and budget depend on this machine's load and are asserted on the simulation above."""
    audio, reference = librivox_stream()
    offline = wer(reference, "".join(w.text for w in whisper_backend.transcribe(audio)))
    clock = VirtualClock()
    backend = CostedBackend(whisper_backend, clock, factor=2.0, measured=True)
    worker = InferenceWorker(lambda: StreamingTranscriber(backend), clock=clock)
    worker.start(own_thread=False)
    [stream] = streams = [SimStream(audio)]
    Simulation(worker, clock, streams).run()
    worker.stop()
    text = "".join(w.text for w, _ in stream.committed)
    assert wer(reference, text) <= offline + 0.06, text
    assert stream.flushed and len(backend.spans) >= 3  # streamed, not one pass at the end


class ComputingBackend(ScriptedBackend):
    """A scripted backend whose passes take real time on the real clock (20 ms each)."""

    def transcribe(self, audio, **kwargs):
        time.sleep(0.02)  # stands for the model's compute; nothing asserts on time
        return super().transcribe(audio, **kwargs)


def test_the_worker_thread_waits_out_the_budget_and_delivers_everything():
    truth = speech_truth(20.0)
    backend = ComputingBackend(truth)
    worker = InferenceWorker(
        lambda: StreamingTranscriber(backend, StreamingConfig(), TruthSpeech(truth)),
        WorkerConfig(cpu_budget=0.5, max_turn_seconds=1.0),
    )
    results: queue.Queue = queue.Queue()
    worker.start()
    try:
        stream = worker.open_stream(results.put)
        audio = ramp(0, 20 * SAMPLE_RATE)
        step = SAMPLE_RATE // 10
        stream.submit([AudioChunk("item", audio[i : i + step]) for i in range(0, len(audio), step)])
        stream.submit([Flush("item", final=True)])
        words = []
        while True:
            result = results.get(timeout=60)
            if isinstance(result, (WordsResult, FlushedResult)):
                words += [i for w in result.committed for _, i in word_ids(w.text)]
            if isinstance(result, FlushedResult):
                break
        assert words == every_word(truth)
        assert stream.lag_seconds == 0.0 and worker.lags() == {stream.name: 0.0}
        assert worker.cost_summary().passes >= 1
    finally:
        worker.stop()


def test_a_budget_out_of_range_is_refused_when_the_worker_is_made():
    with pytest.raises(ValueError, match=r"cpu budget must be in \(0, 1\], not 1.5"):
        InferenceWorker(
            lambda: StreamingTranscriber(ScriptedBackend(Truth(()))),
            WorkerConfig(cpu_budget=1.5),
        )

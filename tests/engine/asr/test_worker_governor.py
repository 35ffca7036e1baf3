"""The inference worker under its compute governor, on simulated slower machines.

A virtual clock and a scripted backend whose passes cost what Whisper base's would on a machine
1.5, 2 or 3 times slower (:mod:`tests.support.slow_machine`; :func:`window_cost`: passes
costing by their window, as the real model's do): no real sleeps, no timed assertions. What must hold: the budget over every 10 s, lag bounded, every word committed
exactly once and in order (nothing skipped), and a flooder kept to its share.
"""

from __future__ import annotations

import queue
import statistics
import time
from collections.abc import Callable

import pytest

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from desktop_rt.engine.asr.worker import (
    ConsumedResult,
    FlushedResult,
    InferenceWorker,
    WordsResult,
    WorkerConfig,
)
from desktop_rt.engine.protocol.events import AudioChunk, Flush
from tests.support.clips import librivox_stream, wer
from tests.support.scripted_backend import (
    PassStyle,
    ScriptedBackend,
    Truth,
    TruthSpeech,
    TruthWord,
    ramp,
    word_ids,
)
from tests.support.slow_machine import (
    CostedBackend,
    SimStream,
    Simulation,
    VirtualClock,
    base_cost,
    max_busy,
    speech_truth,
)

FACTORS = [1.0, 1.5, 2.0, 3.0]
DEFAULT = WorkerConfig()


def window_cost(window_seconds: float) -> float:
    """A pass of Whisper base int8 on two cores here, by its window: the decoder re-reads the
    whole window, so a long one costs much more than :func:`base_cost` says (the embedded
    model's ``transcribe`` took 0.4 CPU s at 6 s, 0.6 at 12 and 1.35 at 24 on two cores)."""
    return 0.15 + 0.05 * window_seconds


def simulate(
    truth: Truth,
    factor: float,
    paces: list[float],
    seconds: float,
    config: WorkerConfig = DEFAULT,
    cost: Callable[[float], float] = base_cost,
) -> tuple[list[SimStream], CostedBackend]:
    clock = VirtualClock()
    backend = CostedBackend(ScriptedBackend(truth), clock, factor, cost=cost)
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


@pytest.mark.parametrize("factor", [2.0, 3.0])
def test_where_a_pass_costs_by_its_window_a_slow_machine_stays_within_4_s(factor):
    """Issue 15's slow machines with passes costing what they do here by window length: fewer,
    longer passes, nothing skipped, never more than 4 s behind."""
    truth = speech_truth(90.0)
    [stream], backend = simulate(truth, factor, [1.0], 90.0, cost=window_cost)
    assert stream.word_indices() == every_word(truth)
    assert stream.max_lag() <= 4.0
    assert max_busy(backend.spans, 10.0) <= 0.8 * 10.0 + overrun(backend.spans)


def overrun(spans: list[tuple[float, float]]) -> float:
    """The most a pass cost over the one before (the governor's estimate overshoots by that
    once: a pass costing by its window grows as the window does)."""
    costs = [e - s for s, e in spans]
    return max((b - a for a, b in zip(costs, costs[1:], strict=False)), default=0.0)


@pytest.mark.parametrize(("factor", "bound"), [(1.0, 1.2), (2.0, 1.2), (3.0, 1.3)])
def test_a_flood_whose_passes_cost_by_their_window_leaves_a_live_stream_its_latency(factor, bound):
    """Where a pass costs by its window, a flood's long windows used to cost a live stream
    1.6x its latency at 2x and 3.2x at 3x (12 s behind): now its turns are shorter, its passes
    take at most 5% of the time and no room is held for them until one is due."""
    truth = speech_truth(60.0)
    [solo], _ = simulate(truth, factor, [1.0], 60.0, cost=window_cost)
    (steady, flooder), backend = simulate(truth, factor, [1.0, 20.0], 60.0, cost=window_cost)
    alone = statistics.median(solo.latencies(truth))
    beside = statistics.median(steady.latencies(truth))
    assert beside <= bound * alone, (alone, beside)
    assert steady.word_indices() == flooder.word_indices() == every_word(truth)
    assert max_busy(backend.spans, 10.0) <= 0.8 * 10.0 + 0.05


def test_beside_a_stream_keeping_up_a_flood_passes_within_its_flood_share():
    truth = speech_truth(60.0)
    clock = VirtualClock()
    backends: list[CostedBackend] = []  # one per stream, in the order they open

    def transcriber() -> StreamingTranscriber:
        backends.append(CostedBackend(ScriptedBackend(truth), clock, 2.0, cost=window_cost))
        return StreamingTranscriber(backends[-1], StreamingConfig(), TruthSpeech(truth))

    worker = InferenceWorker(transcriber, clock=clock)
    worker.start(own_thread=False)
    audio = ramp(0, 60 * SAMPLE_RATE)
    steady, flooder = streams = [SimStream(audio), SimStream(audio, pace=20.0)]
    Simulation(worker, clock, streams).run()
    worker.stop()
    live_end = steady.committed[-1][1]
    flood = [(s, e) for s, e in backends[1].spans if s < live_end]
    longest = max(e - s for s, e in flood)
    # its first two passes come before it is a flood (16 s waiting); then 5% of the time
    assert sum(e - s for s, e in flood) <= DEFAULT.flood_share * live_end + 2 * longest
    assert len(flood) < live_end / DEFAULT.budget_window  # fewer than one pass per window
    assert flooder.word_indices() == every_word(truth)  # it never starves


def test_a_flood_takes_shorter_turns_while_another_stream_keeps_up_and_full_ones_alone():
    truth = speech_truth(40.0)
    clock = VirtualClock()
    backend = CostedBackend(ScriptedBackend(truth), clock)
    worker = InferenceWorker(
        lambda: StreamingTranscriber(backend, StreamingConfig(), TruthSpeech(truth)),
        clock=clock,
    )
    worker.start(own_thread=False)
    taken: dict[str, list[float]] = {"live": [], "flood": []}

    def record(name: str) -> Callable[[object], None]:
        def take(result: object) -> None:
            if isinstance(result, ConsumedResult):
                taken[name].append(result.seconds)

        return take

    streams = {name: worker.open_stream(record(name)) for name in taken}
    audio = ramp(0, 40 * SAMPLE_RATE)
    step = SAMPLE_RATE // 10
    chunks = [AudioChunk("item", audio[i : i + step]) for i in range(0, len(audio), step)]
    streams["flood"].submit(chunks)  # 40 s at once: a flood
    streams["live"].submit(chunks[:10])  # 1 s: keeping up
    while (due := worker.run_due_turn()) is not None:
        clock.t = max(clock.t, due)
    worker.stop()
    assert sum(taken["flood"]) == pytest.approx(40.0)
    # its first turn came while the live stream was active; later ones, alone, are full
    assert taken["flood"][0] == pytest.approx(DEFAULT.flood_turn_seconds)
    assert max(taken["flood"]) == pytest.approx(DEFAULT.max_turn_seconds)
    assert sum(taken["live"]) == pytest.approx(1.0)


def test_flood_settings_reach_the_governor():
    config = WorkerConfig(flood_share=0.2, flood_turn_seconds=1.0)
    assert config.governor.flood_share == 0.2
    with pytest.raises(ValueError, match=r"flood share must be in \(0, 1\], not 1.6"):
        InferenceWorker(
            lambda: StreamingTranscriber(ScriptedBackend(Truth(()))),
            WorkerConfig(flood_share=1.6),
        )
    with pytest.raises(ValueError, match=r"flood turn must be positive, not 0.0 s"):
        WorkerConfig(flood_turn_seconds=0.0)


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


@pytest.mark.parametrize("factor", [1.0, 2.0, 3.0])
def test_beside_another_real_time_stream_a_word_waits_at_most_two_of_its_passes(factor):
    """A word is committed after two passes of its stream (one hears it, the next agrees);
    beside one other stream each of those may wait for one pass of the other and the spacing
    after it: at most ``2 * longest pass / budget`` over the latency alone. The equal share
    used to be reckoned as if each stream's next pass were already spent, so two streams whose
    passes cost over 1 s (here at 2x and 3x) sat idle with audio waiting: 7.96 s at 2x (bound
    7.72) and 17.41 s at 3x (bound 13.6), 2.9x and 3.3x their latency alone."""
    truth = speech_truth(60.0)
    [solo], _ = simulate(truth, factor, [1.0], 60.0, cost=window_cost)
    pair, backend = simulate(truth, factor, [1.0, 1.0], 60.0, cost=window_cost)
    alone = statistics.median(solo.latencies(truth))
    longest = max(e - s for s, e in backend.spans)
    bound = alone + 2 * longest / DEFAULT.cpu_budget
    for stream in pair:
        assert statistics.median(stream.latencies(truth)) <= bound, (alone, longest)
        assert stream.word_indices() == every_word(truth)


class FloodWatch(Simulation):
    """A simulation that notes every stream the worker ever took for a flood."""

    def __init__(self, worker: InferenceWorker, clock: VirtualClock, streams: list[SimStream]):
        super().__init__(worker, clock, streams)
        self.floods: set[str] = set()

    def _send_due(self) -> None:
        super()._send_due()
        self.floods |= {s.stream.name for s in self.streams if s.stream and s.stream.flooding}


@pytest.mark.parametrize("factor", [1.5, 2.0])
def test_a_real_time_stream_is_never_a_flood_however_far_behind(factor):
    """Four real-time streams on a machine that cannot keep up with them fall more than two
    turns behind; they used to be taken for floods (three of four, each then held to 5% of the
    time and 40-60 s behind, while the fourth was served). A flood is a stream that sent more
    than a turn beyond real time: none of these is, and none is starved."""
    truth = speech_truth(60.0)
    clock = VirtualClock()
    backend = CostedBackend(ScriptedBackend(truth), clock, factor, cost=window_cost)
    worker = InferenceWorker(
        lambda: StreamingTranscriber(backend, StreamingConfig(), TruthSpeech(truth)), clock=clock
    )
    worker.start(own_thread=False)
    streams = [SimStream(ramp(0, 60 * SAMPLE_RATE)) for _ in range(4)]
    simulation = FloodWatch(worker, clock, streams)
    simulation.run()
    worker.stop()
    assert simulation.floods == set()
    medians = [statistics.median(s.latencies(truth)) for s in streams]
    assert max(medians) <= 2 * min(medians), medians
    for stream in streams:
        assert stream.word_indices() == every_word(truth)


def run_on_truth(seconds: float) -> Truth:
    """Words of 0.3 s, 0.1 s apart, with no sentence end and no pause: nothing to trim at."""
    words = [TruthWord(i, 0.5 + 0.4 * i, 0.8 + 0.4 * i) for i in range(int((seconds - 2) / 0.4))]
    return Truth(tuple(words))


@pytest.mark.parametrize("factor", [1.0, 1.5, 2.0])
def test_a_recording_sent_in_10_s_appends_is_heard_in_windows_one_pass_takes_whole(factor):
    """A client sending a file in 10 s appends at once: a turn takes only the audio its
    transcriber has room for (a long append is split), so no pass hears more than the model's
    30 s window. Passes used to hear 33 s here; with Whisper the audio past 30 s was cut at its
    limit mid-speech, and on an AVX2 machine the 5-minute socket test lost 17.7 % of its words
    that way. Each pass's last 8 words are guessed (they never agree), so commits lag."""
    truth = run_on_truth(120.0)
    windows: list[float] = []

    def cost(seconds: float) -> float:
        windows.append(seconds)
        return window_cost(seconds)

    clock = VirtualClock()
    styles = [PassStyle(guessed_tail=8, variant=1 + i % 3) for i in range(400)]
    scripted = ScriptedBackend(truth, styles, traits=BackendTraits(window_seconds=30.0))
    backend = CostedBackend(scripted, clock, factor, cost=cost)
    worker = InferenceWorker(
        lambda: StreamingTranscriber(backend, StreamingConfig(), TruthSpeech(truth)),
        clock=clock,
    )
    worker.start(own_thread=False)
    stream = SimStream(ramp(0, 120 * SAMPLE_RATE), pace=100.0, chunk_seconds=10.0)
    Simulation(worker, clock, [stream]).run()
    worker.stop()
    assert max(windows) <= 30.0, max(windows)
    assert stream.word_indices() == every_word(truth)

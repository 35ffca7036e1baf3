"""When a whole-turn decode runs (engine/asr/worker_decodes.py), and what it does to the other
streams of the worker.

The rule is tested on its own first; then the worker runs three real-time streams that end
turns at their pauses (as server_vad does) on a virtual clock, their passes and decodes costing
what Whisper base's do here by window (:func:`window_cost`), through
:func:`tests.support.turn_sim.run_turns`: no real sleeps, no timed assertions.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from desktop_rt.core_types import SAMPLE_RATE, Word
from desktop_rt.engine.asr.agreement import StreamUpdate
from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from desktop_rt.engine.asr.worker import (
    FailedResult,
    FlushedResult,
    InferenceWorker,
    WorkerConfig,
    WorkerResult,
    WorkerStream,
)
from desktop_rt.engine.asr.worker_decodes import DecodeView, PendingDecode, decode_to_run
from desktop_rt.engine.protocol.events import AudioChunk, Clear, Flush
from tests.support.scripted_backend import ScriptedBackend, Truth, TruthSpeech, ramp, word_ids
from tests.support.slow_machine import CostedBackend, VirtualClock, speech_truth
from tests.support.turn_sim import DecodeSpan, TurnRun, TurnStream, paused_truth, run_turns

QUIET = 1.0


def window_cost(window_seconds: float) -> float:
    """A pass (or a decode) of Whisper base int8 on two cores here, by its window (as in
    test_worker_governor.py: 0.57 s for an 8.4 s turn decoded whole)."""
    return 0.15 + 0.05 * window_seconds


def view(
    name: str,
    decode: PendingDecode | None = None,
    queued: bool = False,
    last_pass: float | None = None,
    active: bool = True,
) -> DecodeView:
    return DecodeView(name, decode, queued, last_pass, active)


# ---- the rule ------------------------------------------------------------------------------


def test_alone_a_decode_runs_at_once_whatever_its_own_stream_has_queued():
    pending = PendingDecode("item", since=5.0, wait=3.0)
    assert decode_to_run(5.0, [view("a", pending, queued=True, last_pass=4.9)], QUIET) == (
        "a",
        5.0,
    )
    idle = view("b", active=False, queued=False, last_pass=4.9)  # not active: does not count
    assert decode_to_run(5.0, [view("a", pending), idle], QUIET) == ("a", 5.0)


def test_a_decode_waits_while_another_stream_has_a_turn_queued_until_its_bound():
    pending = PendingDecode("item", since=5.0, wait=3.0)
    views = [view("a", pending), view("b", queued=True)]
    assert decode_to_run(5.0, views, QUIET) == (None, 8.0)
    assert decode_to_run(8.0, views, QUIET) == ("a", 8.0)  # waited its turn's length: runs


def test_a_decode_waits_for_another_stream_in_speech_to_go_quiet():
    pending = PendingDecode("item", since=5.0, wait=3.0)
    views = [view("a", pending), view("b", last_pass=5.4), view("c", last_pass=3.0)]
    assert decode_to_run(5.5, views, QUIET) == (None, pytest.approx(6.4))
    assert decode_to_run(6.4, views, QUIET) == ("a", 6.4)


def test_the_oldest_decode_goes_first_and_one_past_its_bound_before_any_other():
    older = PendingDecode("x", since=1.0, wait=5.0)
    newer = PendingDecode("y", since=2.0, wait=0.5)
    views = [view("b", newer), view("a", older)]
    assert decode_to_run(2.2, views, QUIET) == ("a", 2.2)  # a gap: the oldest first
    views = [view("b", newer), view("a", older), view("c", queued=True)]
    assert decode_to_run(2.2, views, QUIET) == (None, 2.5)
    assert decode_to_run(2.5, views, QUIET) == ("b", 2.5)  # past its bound: before "a"


def test_with_no_decode_pending_there_is_nothing_to_wake_for():
    assert decode_to_run(1.0, [view("a", queued=True)], QUIET) == (None, float("inf"))


# ---- the worker ----------------------------------------------------------------------------


def flush_times(stream: TurnStream) -> list[float]:
    """When each of its items' flush was sent (virtual seconds), the last at its end."""
    end = len(stream.audio) / SAMPLE_RATE
    return [stream.start + t for t in stream.flush_at if t < end] + [stream.start + end]


def decodes_of(run: TurnRun, stream: TurnStream) -> list[DecodeSpan]:
    assert stream.stream is not None
    return [d for d in run.decodes if d.name == stream.stream.name]


def every_word(truth: Truth) -> list[int]:
    return [w.index for w in truth.words]


def in_a_gap(stream: TurnStream, k: int, decode: DecodeSpan) -> bool:
    """Whether decode ``k`` of ``stream`` ran in a gap: before its bound (its turn's length),
    and before the stream's next flush came (which makes the decode its next turn)."""
    times = flush_times(stream)
    held = k + 1 < len(times) and times[k + 1] <= decode.start + 1e-9
    return decode.waited < decode.turn_seconds - 0.05 and not held


def test_beside_real_time_streams_a_decode_waits_for_a_gap_and_holds_no_queued_pass():
    """Three streams at real time, each ending a turn at each 2 s pause. A decode starts only
    where no other stream has audio waiting (so no pass of theirs waits behind it), unless it
    waited its bound or its own next turn came. On the code before, each ran inside its
    flush's turn: 26 of 33 started with another stream's audio waiting."""
    truth = paused_truth(60.0, 2.0)
    run = run_turns(truth, 60.0, [0.0, 0.3, 0.6], 0.5, window_cost)
    gaps = 0
    for stream in run.streams:
        decodes = decodes_of(run, stream)
        assert len(decodes) == len(stream.items)
        for k, decode in enumerate(decodes):
            if in_a_gap(stream, k, decode):
                gaps += 1
                assert set(decode.others_lag.values()) == {0.0}, decode
        assert stream.final_indices() == every_word(truth)
    assert gaps >= len(run.decodes) // 2  # most found a gap: the rule is not left untried


def test_beside_real_time_streams_every_turn_gets_its_decode_in_order():
    truth = speech_truth(60.0)
    run = run_turns(truth, 60.0, [0.0, 0.3, 0.6], 1.0, window_cost)
    for stream in run.streams:
        flushed = stream.flushed()
        assert [r.item_id for r in flushed] == [item for item, _ in stream.items]
        assert all(r.final is not None for r in flushed)
        assert stream.final_indices() == every_word(truth)  # each turn's words, once, in order
        assert stream.committed_indices() == every_word(truth)
        assert len(decodes_of(run, stream)) == len(stream.items)


def test_a_decode_starved_by_continuous_passes_runs_within_its_bound():
    """Two streams that never pause or flush keep the worker busy on a machine 1.5x slower;
    the third's decodes still run once they waited their turn's length, after at most the
    pass in progress."""
    truth = speech_truth(60.0)
    flushing = [True, False, False]
    run = run_turns(truth, 60.0, [0.0, 0.3, 0.6], 1.5, window_cost, flushing=flushing)
    longest = max(e - s for s, e in run.pass_spans())
    talker = run.streams[0]
    decodes = decodes_of(run, talker)
    assert len(decodes) == len(talker.items)
    assert any(d.waited > 1.0 for d in decodes[:-1])  # starved for a while, not run at once
    for decode in decodes:
        assert decode.waited <= decode.turn_seconds + 0.05 + longest, decode
    assert talker.final_indices() == every_word(truth)


def test_one_stream_decodes_right_after_its_flush_as_it_always_did():
    truth = speech_truth(40.0)
    run = run_turns(truth, 40.0, [0.0], 1.0, window_cost)
    [stream] = run.streams
    decodes = decodes_of(run, stream)
    assert len(decodes) == len(stream.items) >= 3
    assert all(d.waited == 0.0 for d in decodes)
    assert stream.final_indices() == every_word(truth)


def test_a_decode_quiet_below_zero_is_refused_with_the_value():
    with pytest.raises(ValueError, match=r"decode quiet must be at least 0, not -1.0 s"):
        WorkerConfig(decode_quiet_seconds=-1.0)


class Failing(StreamingTranscriber):
    """The real transcriber; its ``process`` fails while ``fail`` is set."""

    fail = False

    def process(self) -> StreamUpdate:
        if self.fail:
            raise RuntimeError("the model went away")
        return super().process()


@dataclass
class Deferred:
    """A worker whose decodes wait their bound (a long ``quiet``) beside a busy stream: stream
    ``a`` (on ``transcriber``, its results in ``got``) has flushed turn "one" at 5 s, and
    stream ``b`` has 12 s queued."""

    worker: InferenceWorker
    clock: VirtualClock
    transcriber: Failing
    got: list[WorkerResult]
    a: WorkerStream
    b: WorkerStream


def deferred_worker(truth: Truth) -> Deferred:
    """A :class:`Deferred` worker for ``truth``, stream "a" on a :class:`Failing` transcriber."""
    clock = VirtualClock()
    traits = BackendTraits(window_seconds=30.0)
    backend = CostedBackend(ScriptedBackend(truth, traits=traits), clock, cost=window_cost)
    worker = InferenceWorker(
        lambda: StreamingTranscriber(backend, StreamingConfig(), TruthSpeech(truth)),
        WorkerConfig(decode_quiet_seconds=100.0, max_turn_seconds=1.0),
        clock=clock,
    )
    worker.start(own_thread=False)
    transcriber = Failing(backend, StreamingConfig(), TruthSpeech(truth))
    got: list[WorkerResult] = []
    a = worker.open_stream(got.append, transcriber)
    b = worker.open_stream(lambda result: None)
    b.submit(chunks("b", 0.0, 12.0))
    a.submit([*chunks("one", 0.0, 5.0), Flush("one", final=False)])
    return Deferred(worker, clock, transcriber, got, a, b)


def chunks(item: str, start: float, end: float) -> list[AudioChunk]:
    audio = ramp(int(start * SAMPLE_RATE), int((end - start) * SAMPLE_RATE))
    step = SAMPLE_RATE // 10
    return [AudioChunk(item, audio[i : i + step]) for i in range(0, len(audio), step)]


def drain(worker: InferenceWorker, clock: VirtualClock) -> None:
    while (due := worker.run_due_turn()) is not None:
        clock.t = max(clock.t, due)


def indices(words: tuple[Word, ...] | None) -> list[int]:
    return [i for w in words or () for _, i in word_ids(w.text)]


def test_a_clear_after_a_flush_waits_for_its_decode_and_loses_it_not():
    truth = speech_truth(12.0)
    run = deferred_worker(truth)
    worker, clock, got, a = run.worker, run.clock, run.got, run.a
    a.submit([*chunks("two", 5.0, 6.0), Clear("two"), *chunks("three", 6.0, 12.0)])
    a.submit([Flush("three", final=True)])
    drain(worker, clock)
    flushed = [r for r in got if isinstance(r, FlushedResult)]
    assert [r.item_id for r in flushed] == ["one", "three"]
    said = [w.index for w in truth.words]
    assert indices(flushed[0].final) == [i for i in said if truth.words[i].end <= 5.0]
    assert indices(flushed[1].final) == [i for i in said if truth.words[i].start >= 6.0]


def test_a_pass_that_fails_while_a_decode_waits_answers_that_flush_first():
    """The failure drops the stream's audio (the turn to decode with it): the waiting flush is
    answered undecoded, before the failure, so the session charges the failure to the item
    being heard, not to the one that ended; its streamed words stand."""
    truth = speech_truth(12.0)
    run = deferred_worker(truth)
    worker, clock, got, a, b = run.worker, run.clock, run.got, run.a, run.b
    drain(worker, clock)  # "one" is decoded: b's audio is all heard
    a.submit([*chunks("two", 5.0, 9.0), Flush("two", final=False)])
    b.submit(chunks("b", 12.0, 24.0))
    while a._decode is None:  # until "two" is flushed and waits for its decode beside b
        due = worker.run_due_turn()
        assert due is not None
        clock.t = max(clock.t, due)
    run.transcriber.fail = True
    a.submit(chunks("three", 9.0, 11.0))
    drain(worker, clock)
    ends = [r for r in got if isinstance(r, (FlushedResult, FailedResult))]
    first, second, *failures = ends
    assert isinstance(first, FlushedResult) and first.item_id == "one" and first.final
    assert isinstance(second, FlushedResult) and second.item_id == "two"
    assert second.final is None
    assert failures and all(isinstance(r, FailedResult) for r in failures)
    assert a._decode is None

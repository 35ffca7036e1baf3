"""WorkerStream's queue bookkeeping: how far ahead of real time a stream sends its audio."""

from __future__ import annotations

import numpy as np
import pytest

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.asr.streaming import StreamingTranscriber
from desktop_rt.engine.asr.worker import InferenceWorker, WorkerStream
from desktop_rt.engine.protocol.events import AudioChunk, Flush
from tests.support.scripted_backend import ScriptedBackend, Truth


def a_stream() -> WorkerStream:
    worker = InferenceWorker(lambda: StreamingTranscriber(ScriptedBackend(Truth(()))))
    return WorkerStream(worker, worker._factory(), lambda result: None, "s")


def chunk(seconds: float) -> AudioChunk:
    return AudioChunk("item", np.zeros(int(seconds * SAMPLE_RATE), dtype=np.float32))


def test_a_stream_sending_at_real_time_is_never_ahead_however_much_waits():
    stream = a_stream()
    for k in range(300):  # 30 s in 100 ms chunks, none taken in: 30 s waiting
        stream._queue([chunk(0.1)], now=0.1 * k)
    assert stream.lag_seconds == pytest.approx(30.0)
    assert stream.ahead_seconds(29.9, span=10.0) <= 0.1 + 1e-9


def test_a_burst_is_ahead_by_what_it_sent_beyond_the_time_that_passed():
    stream = a_stream()
    stream._queue([chunk(0.1)], now=0.0)
    stream._queue([chunk(1.0)] * 20, now=1.0)  # 20 s at once, a second after it began
    assert stream.ahead_seconds(2.0, span=10.0) == pytest.approx(20.1 - 2.0)
    # once the burst is older than the span, it no longer counts
    assert stream.ahead_seconds(11.5, span=10.0) == pytest.approx(-10.0)


def test_a_stream_that_sent_nothing_is_not_ahead():
    assert a_stream().ahead_seconds(5.0, span=10.0) == 0.0


def test_a_turn_splits_an_append_longer_than_it_takes_and_keeps_the_rest_in_order():
    stream = a_stream()
    audio = np.arange(10 * SAMPLE_RATE, dtype=np.float32)
    stream._queue([AudioChunk("item", audio), Flush("item", final=True)], now=0.0)
    first = stream._take_turn(4 * SAMPLE_RATE)
    assert [len(c.samples) for c in first if isinstance(c, AudioChunk)] == [4 * SAMPLE_RATE]
    assert stream.lag_seconds == pytest.approx(6.0)
    rest = stream._take_turn(8 * SAMPLE_RATE)
    assert isinstance(rest[-1], Flush)
    taken = [c.samples for c in [*first, *rest] if isinstance(c, AudioChunk)]
    assert np.array_equal(np.concatenate(taken), audio)  # every sample once, in order
    assert stream.lag_seconds == 0.0


def test_a_turn_with_no_room_still_takes_some_audio():
    stream = a_stream()
    stream._queue([chunk(1.0)], now=0.0)
    assert len(stream._take_turn(0)[0].samples) >= 1  # never an empty turn that takes nothing

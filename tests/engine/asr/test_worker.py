"""The inference worker with the real default model and real clips."""

from __future__ import annotations

import queue
import threading

import numpy as np
import pytest

from desktop_rt.engine.asr.streaming import StreamingTranscriber
from desktop_rt.engine.asr.worker import (
    ConsumedResult,
    FailedResult,
    FlushedResult,
    InferenceWorker,
    WordsResult,
    WorkerConfig,
    WorkerStoppedError,
)
from desktop_rt.engine.protocol.events import AudioChunk, Clear, Configure, Flush
from tests.support.clips import librivox_stream, read_clip, reference_text
from tests.support.rt_client import wer

TIMEOUT = 180.0


class Results:
    """Collects one stream's results; waits on a queue, never sleeps."""

    def __init__(self) -> None:
        self.queue: queue.Queue = queue.Queue()
        self.all: list = []
        self.threads: set[str] = set()

    def __call__(self, result) -> None:
        self.threads.add(threading.current_thread().name)
        self.queue.put(result)

    def until(self, kind, timeout: float = TIMEOUT):
        while True:
            result = self.queue.get(timeout=timeout)
            self.all.append(result)
            if isinstance(result, kind):
                return result

    def text(self) -> str:
        words = [
            w for r in self.all if isinstance(r, (WordsResult, FlushedResult)) for w in r.committed
        ]
        return "".join(w.text for w in words)


def chunks(item_id: str, audio: np.ndarray, seconds: float = 0.5) -> list[AudioChunk]:
    step = int(16000 * seconds)
    return [AudioChunk(item_id, audio[i : i + step]) for i in range(0, len(audio), step)]


@pytest.fixture
def worker(whisper_backend):
    w = InferenceWorker(
        lambda: StreamingTranscriber(whisper_backend), WorkerConfig(max_turn_seconds=5.0)
    )
    w.start()
    yield w
    w.stop()


@pytest.mark.slow
def test_one_stream_transcribes_a_clip_in_order(worker):
    results = Results()
    stream = worker.open_stream(results)
    audio = read_clip("ss-0870")
    stream.submit(chunks("item_a", audio))
    stream.submit([Flush("item_a", final=False)])
    flushed = results.until(FlushedResult)
    assert flushed.item_id == "item_a"
    assert results.threads == {"desktop-rt-inference"}
    assert wer(reference_text("ss-0870"), results.text()) < 0.25, results.text()
    consumed = sum(r.seconds for r in results.all if isinstance(r, ConsumedResult))
    assert consumed == pytest.approx(len(audio) / 16000)
    # every word result before the flush names the item of the latest audio chunk
    assert all(r.item_id == "item_a" for r in results.all if isinstance(r, WordsResult))
    # the stream is reusable for the next item; a flush with no audio is answered with no words
    stream.submit([Flush("item_b", final=True)])
    assert results.until(FlushedResult) == FlushedResult("item_b", ())
    stream.close()
    assert worker.wait_for_stream_count(0, timeout=5)


@pytest.mark.slow
def test_a_flooding_stream_cannot_starve_a_new_one(worker):
    flood_results, late_results = Results(), Results()
    flooder = worker.open_stream(flood_results)
    long_audio, _ = librivox_stream()
    flooder.submit(
        chunks("item_flood", np.concatenate([long_audio] * 4), seconds=1.0)
    )  # ~2 minutes
    flood_results.until(ConsumedResult)  # the flooder is being served
    late = worker.open_stream(late_results)
    late.submit(chunks("item_late", read_clip("ss-0880")) + [Flush("item_late", final=True)])
    before = flooder.passes
    late_results.until(FlushedResult)
    # round-robin: the newcomer waited for at most one flooder turn per own turn
    assert flooder.passes - before <= late.passes + 1
    assert flooder.has_work, "the flood is still queued: the newcomer did not wait for it"
    assert wer(reference_text("ss-0880"), late_results.text()) < 0.25, late_results.text()
    flooder.close()
    late.close()


@pytest.mark.slow
def test_close_releases_at_once_and_silences_the_stream(worker):
    results = Results()
    stream = worker.open_stream(results)
    long_audio, _ = librivox_stream()
    stream.submit(chunks("item_x", long_audio, seconds=1.0) + [Flush("item_x", final=True)])
    results.until(ConsumedResult)
    stream.close()
    assert stream.closed and not stream.has_work
    assert worker.stream_count == 0
    delivered = results.queue.qsize()
    # another stream's turn proves the worker moved on; nothing of the closed one came after
    probe_results = Results()
    probe = worker.open_stream(probe_results)
    probe.submit([Flush("item_probe", final=True)])
    probe_results.until(FlushedResult)
    assert results.queue.qsize() == delivered
    assert not any(isinstance(r, FlushedResult) for r in list(results.queue.queue))
    stream.submit(chunks("item_y", read_clip("ss-0880")))  # ignored, no error
    assert not stream.has_work
    probe.close()


@pytest.mark.slow
def test_a_failing_inference_reports_and_the_stream_goes_on(worker):
    results = Results()
    stream = worker.open_stream(results)
    audio = read_clip("ss-0880")
    stream.submit(
        [Configure(language="zz", prompt=None)]
        + chunks("item_1", audio)
        + [Flush("item_1", final=False)]
    )
    failed = results.until(FailedResult)
    assert "zz" in failed.message
    stream.submit([Configure(language="en", prompt=None), Clear("item_1")])
    stream.submit(chunks("item_2", audio) + [Flush("item_2", final=True)])
    flushed = results.until(FlushedResult)
    while flushed.item_id != "item_2":
        flushed = results.until(FlushedResult)
    text = "".join(
        w.text for r in results.all if getattr(r, "item_id", "") == "item_2" for w in r.committed
    )
    assert wer(reference_text("ss-0880"), text) < 0.25, text
    stream.close()


def test_stop_ends_the_thread_and_refuses_new_streams(whisper_backend):
    worker = InferenceWorker(lambda: StreamingTranscriber(whisper_backend))
    worker.start()
    results = Results()
    stream = worker.open_stream(results)
    stream.submit([Flush("item_0", final=True)])
    assert results.until(FlushedResult).item_id == "item_0"
    worker.stop(timeout=30)
    assert not worker.running
    with pytest.raises(WorkerStoppedError):
        worker.open_stream(results)
    stream.submit([Flush("item_1", final=True)])  # a stream of a stopped worker ignores input
    assert results.queue.empty()


@pytest.mark.slow
def test_clear_drops_the_items_queued_audio_at_once(worker):
    results = Results()
    stream = worker.open_stream(results)
    long_audio, _ = librivox_stream()
    queued = chunks("item_c", long_audio, seconds=1.0)
    stream.submit(queued)
    stream.submit([Clear("item_c")])
    stream.submit(chunks("item_d", read_clip("ss-0880")) + [Flush("item_d", final=True)])
    results.until(FlushedResult)
    consumed = sum(r.seconds for r in results.all if isinstance(r, ConsumedResult))
    # every queued second is accounted for (flood control), transcribed or dropped
    assert consumed == pytest.approx((len(long_audio) + len(read_clip("ss-0880"))) / 16000)
    assert stream.passes <= 4, "the cleared audio was not transcribed turn after turn"
    text = "".join(
        w.text for r in results.all if getattr(r, "item_id", "") == "item_d" for w in r.committed
    )
    assert wer(reference_text("ss-0880"), text) < 0.25, text
    stream.close()

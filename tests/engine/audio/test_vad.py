"""Voice activity: real Silero scores per frame, and turn detection over them."""

from __future__ import annotations

import numpy as np
import pytest

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.vad import (
    FRAME_SAMPLES,
    FRAME_SECONDS,
    FrameVad,
    TurnDetector,
    TurnDetectorSettings,
    TurnEvent,
)
from tests.support.clips import read_clip


def _silence(seconds: float) -> np.ndarray:
    return np.zeros(int(SAMPLE_RATE * seconds), dtype=np.float32)


def test_silero_scores_speech_high_and_silence_low():
    speech = read_clip("beckett")
    vad = FrameVad()
    scored = vad.process(np.concatenate([_silence(1.0), speech]))
    silent = [p for t, p in scored if t + FRAME_SECONDS <= 1.0]
    spoken = [p for t, p in scored if t >= 1.0]
    assert silent and max(silent) < 0.2
    assert sum(p >= 0.5 for p in spoken) > 0.3 * len(spoken)


def test_frames_do_not_depend_on_how_the_stream_is_chunked():
    audio = read_clip("ss-0870")[: SAMPLE_RATE * 3]
    whole = FrameVad().process(audio)
    chunked_vad, chunked = FrameVad(), []
    for start in range(0, len(audio), 700):
        chunked += chunked_vad.process(audio[start : start + 700])
    assert len(whole) == len(audio) // FRAME_SAMPLES == len(chunked)
    assert [t for t, _ in whole] == [t for t, _ in chunked]
    assert np.allclose([p for _, p in whole], [p for _, p in chunked], atol=1e-5)


def test_reset_restarts_the_stream_clock():
    vad = FrameVad()
    vad.process(_silence(0.5))
    vad.reset()
    assert vad.process(_silence(FRAME_SECONDS))[0][0] == 0.0


def _frames(probabilities: list[float]) -> list[tuple[float, float]]:
    return [(i * FRAME_SECONDS, p) for i, p in enumerate(probabilities)]


def test_a_turn_starts_at_the_threshold_with_its_padding_and_stops_after_the_pause():
    settings = TurnDetectorSettings(threshold=0.5, prefix_padding_ms=64, silence_duration_ms=320)
    detector = TurnDetector(settings)
    events = detector.feed(_frames([0.1] * 10 + [0.9] * 20 + [0.0] * 10))
    assert events[0] == TurnEvent("started", pytest.approx(10 * FRAME_SECONDS - 0.064))
    assert events[1] == TurnEvent("stopped", pytest.approx(30 * FRAME_SECONDS))
    assert len(events) == 2 and not detector.in_speech


def test_a_pause_shorter_than_the_silence_duration_keeps_the_turn_open():
    detector = TurnDetector(TurnDetectorSettings(silence_duration_ms=500))
    events = detector.feed(_frames([0.9] * 10 + [0.0] * 10 + [0.9] * 10))  # a 320 ms pause
    assert [e.kind for e in events] == ["started"] and detector.in_speech


def test_probabilities_just_under_the_threshold_do_not_end_speech():
    detector = TurnDetector(TurnDetectorSettings(threshold=0.5, silence_duration_ms=100))
    events = detector.feed(_frames([0.9] * 5 + [0.4] * 30))  # above threshold - 0.15
    assert [e.kind for e in events] == ["started"]
    assert [e.kind for e in detector.feed(_frames([0.3] * 10))] == ["stopped"]


def test_turns_on_real_speech_alternate_and_cover_it():
    audio = np.concatenate([_silence(0.5), read_clip("beckett"), _silence(1.5)])
    detector = TurnDetector(TurnDetectorSettings())
    events = detector.feed(FrameVad().process(audio))
    kinds = [e.kind for e in events]
    assert kinds and kinds == ["started", "stopped"] * (len(kinds) // 2)
    assert events[0].at <= 0.5 + 0.5  # speech begins within the clip's first half second
    assert all(a.at <= b.at for a, b in zip(events, events[1:], strict=False))

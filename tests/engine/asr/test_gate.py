"""SegmentGate: where a segment's speech starts and ends, pauses and endpoints."""

from __future__ import annotations

import numpy as np

from desktop_rt.engine.asr.gate import SegmentGate
from desktop_rt.engine.asr.streaming_config import StreamingConfig
from desktop_rt.engine.audio.vad import FRAME_SECONDS


class LoudIsSpeech:
    def __call__(self, frame: np.ndarray) -> float:
        return 1.0 if float(np.abs(frame).max()) > 0.05 else 0.0

    def reset(self) -> None:
        pass


def audio(*parts: tuple[float, float]) -> np.ndarray:
    """(seconds, level) pieces, joined."""
    return np.concatenate([np.full(int(s * 16000), v, dtype=np.float32) for s, v in parts])


def test_a_segment_opens_at_its_first_speech_and_tracks_its_last():
    gate = SegmentGate(StreamingConfig(), LoudIsSpeech())
    gate.feed(audio((1.0, 0.0)))
    assert not gate.in_speech and gate.segment_start is None
    gate.feed(audio((1.0, 0.1), (0.5, 0.0)))
    assert gate.in_speech
    assert gate.speech_start is not None and 1.0 - FRAME_SECONDS < gate.speech_start <= 1.0
    assert gate.segment_start == gate.speech_start - 0.4
    assert 2.0 <= gate.last_speech_end < 2.0 + FRAME_SECONDS
    assert gate.speech_done == gate.last_speech_end + 0.4
    gate.close()
    assert not gate.in_speech and gate.last_speech_end > 2.0


def test_pause_hint_pad_and_endpoint_follow_the_last_speech():
    gate = SegmentGate(StreamingConfig(), LoudIsSpeech())
    gate.feed(audio((1.0, 0.1)))
    end = gate.last_speech_end
    assert not gate.pausing(end + 0.2) and gate.pausing(end + 0.25)
    assert not gate.in_pause(end + 0.3) and gate.in_pause(end + 0.4)
    assert not gate.endpoint_reached(end + 0.7) and gate.endpoint_reached(end + 0.8)
    never = SegmentGate(StreamingConfig(pause_hint_seconds=None), LoudIsSpeech())
    never.feed(audio((1.0, 0.1)))
    assert not never.pausing(end + 5.0)

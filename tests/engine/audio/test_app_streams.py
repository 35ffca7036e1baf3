"""One application's sound through a real PulseAudio daemon: two players, only one captured."""

from __future__ import annotations

import threading
import time
import wave
from pathlib import Path

import numpy as np
import pytest

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.app_streams import AppAudioSource, list_app_streams
from desktop_rt.engine.audio.sources import CLOSED, LOST, OPEN, OPENING, SourceStatus
from tests.support.clips import read_clip, wer
from tests.support.pulse_daemon import from_speech, play_as, pulse_daemon


class Collector:
    def __init__(self) -> None:
        self.blocks: list[np.ndarray] = []
        self.statuses: list[SourceStatus] = []
        self.changed = threading.Condition()

    def block(self, samples: np.ndarray) -> None:
        self.blocks.append(samples)

    def status(self, status: SourceStatus) -> None:
        with self.changed:
            self.statuses.append(status)
            self.changed.notify_all()

    def wait_for(self, state: str, timeout: float = 20) -> SourceStatus:
        with self.changed:
            assert self.changed.wait_for(
                lambda: any(s.state == state for s in self.statuses), timeout
            ), self.statuses
            return next(s for s in self.statuses if s.state == state)


def test_playing_applications_are_listed_by_name():
    daemon = pulse_daemon()
    player = play_as(daemon, "ss-0870", "Listed Player")
    try:
        deadline = time.monotonic() + 10
        while "Listed Player" not in [s.application for s in list_app_streams()]:
            assert time.monotonic() < deadline, list_app_streams()
            time.sleep(0.05)  # bounded poll of another process
    finally:
        player.terminate()
        player.wait(10)


def with_lead_in(clip: str, path: Path, seconds: float = 1.0) -> Path:
    """``clip`` after ``seconds`` of silence, as a 16-bit wav (a call already under way)."""
    audio = np.concatenate([np.zeros(int(SAMPLE_RATE * seconds), np.float32), read_clip(clip)])
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(SAMPLE_RATE)
        out.writeframes((np.clip(audio, -1, 1) * 32767).astype("<i2").tobytes())
    return path


@pytest.mark.slow
def test_only_the_chosen_application_is_captured(whisper_backend, tmp_path):
    daemon = pulse_daemon()
    got = Collector()
    source = AppAudioSource("Meeting App", retry_seconds=0.1)
    source.start(got.block, got.status)
    try:
        lost = got.wait_for(LOST)
        assert "Meeting App is not playing anything" in lost.message
        meeting = play_as(daemon, with_lead_in("ss-0870", tmp_path / "a.wav"), "Meeting App")
        music = play_as(daemon, "ss-0890", "Music Player")  # same output, left out
        got.wait_for(OPEN)
        assert meeting.wait(60) == 0 and music.wait(60) == 0
        with got.changed:  # the stream ended: reported, and looked for again
            assert got.changed.wait_for(
                lambda: [s.state for s in got.statuses].count(LOST) >= 2, 20
            )
    finally:
        source.stop()
    assert got.statuses[-1].state == CLOSED
    assert [s.state for s in got.statuses] == [OPENING, LOST, OPEN, LOST, CLOSED]
    audio = np.concatenate(got.blocks)
    played = from_speech(read_clip("ss-0870"))
    offline = "".join(w.text for w in whisper_backend.transcribe(played, language="en"))
    heard = whisper_backend.transcribe(from_speech(audio), language="en")  # lead-in left out
    text = "".join(w.text for w in heard)
    assert wer(offline, text) <= 0.1, (offline, text)

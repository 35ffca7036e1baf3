"""The file-backed audio source: paced replay, silence after the end, simulated device loss."""

from __future__ import annotations

import time

import numpy as np
import pytest

from desktop_rt.engine.audio.sources import CLOSED, ENDED, LOST, OPEN, FileAudioSource
from tests.support.capture_support import Collector, tone
from tests.support.clips import DATA


def test_file_source_replays_a_wav_paced_and_then_idles_with_silence():
    source = FileAudioSource(DATA / "beckett.wav", pace=20.0)
    assert source.duration == pytest.approx(9.96, abs=0.01)
    got = Collector()
    started = time.monotonic()
    source.start(got.block, got.status)
    try:
        assert source.finished.wait(10)
        elapsed = time.monotonic() - started
        got.wait(lambda: len(got.blocks) * source.block > len(source._samples) + source.block * 3)
    finally:
        source.stop()
    assert elapsed >= 9.96 / 20 * 0.8  # paced, not as fast as possible
    audio = np.concatenate(got.blocks)
    n = len(source._samples)
    np.testing.assert_array_equal(audio[:n], source._samples)
    assert not audio[n:].any()  # silence after the end
    assert got.states() == ["opening", OPEN, ENDED, CLOSED]


def test_file_source_waits_for_play_and_simulates_device_loss_and_return():
    source = FileAudioSource(tone(1.0), pace=10.0, autoplay=False)
    got = Collector()
    source.start(got.block, got.status)
    try:
        got.wait(lambda: len(got.blocks) >= 5)
        assert source.position == 0 and not any(b.any() for b in got.blocks)
        source.play()
        got.wait(lambda: source.position > 0.2)
        source.simulate_loss()
        got.wait(lambda: LOST in got.states())
        with got.changed:
            held = source.position
            count = len(got.blocks)
        source.simulate_return()
        got.wait(lambda: got.states().count(OPEN) == 2)
        assert source.position >= held
        assert source.finished.wait(10)
        assert len(got.blocks) > count
    finally:
        source.stop()
    assert got.states()[-1] == CLOSED

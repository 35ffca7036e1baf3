"""PassSchedule: the regular and onset pace, a backend's least update, and the block grid."""

from __future__ import annotations

import numpy as np
import pytest

from desktop_rt.engine.asr.backend import BackendTraits
from desktop_rt.engine.asr.schedule import PassSchedule
from desktop_rt.engine.asr.streaming_config import StreamingConfig
from desktop_rt.engine.asr.window import AudioWindow


def window_of(total: float, new: float | None = None, start: float = 0.0) -> AudioWindow:
    window = AudioWindow()
    window.append(np.zeros(int(total * 16000), dtype=np.float32))
    window.drop_before(start)
    window.new_samples = int((total if new is None else new) * 16000)
    return window


def test_onset_windows_pass_more_often_once_they_hold_enough_audio():
    schedule = PassSchedule(StreamingConfig(), BackendTraits())
    assert not schedule.regular_pass_due(window_of(0.6))  # under min_window_seconds
    assert schedule.regular_pass_due(window_of(1.2, new=0.3))  # onset: every 0.3 s
    assert not schedule.regular_pass_due(window_of(2.4, new=0.3))  # after it: every 0.6 s
    assert schedule.regular_pass_due(window_of(2.4, new=0.6))
    trimmed = window_of(1.2, new=0.3)
    trimmed.trimmed = True  # a window a trim left short goes at the normal pace
    assert not schedule.regular_pass_due(trimmed)


def test_a_backend_that_asks_for_fewer_updates_gets_them():
    schedule = PassSchedule(StreamingConfig(), BackendTraits(min_update_seconds=2.0))
    assert not schedule.regular_pass_due(window_of(1.9))
    assert schedule.regular_pass_due(window_of(2.0))
    assert not schedule.passes_are_cheap
    assert not schedule.closing_pass_allowed(window_of(3.0))
    cheap = PassSchedule(StreamingConfig(), BackendTraits())
    assert cheap.closing_pass_allowed(window_of(0.9))
    assert not cheap.closing_pass_allowed(window_of(0.8))


def test_grid_passes_come_as_the_window_crosses_each_step_and_hear_whole_blocks():
    traits = BackendTraits(min_update_seconds=2.0, update_grid_seconds=1.0)
    schedule = PassSchedule(StreamingConfig(), traits)  # a step of two 1 s blocks
    assert not schedule.grid_pass_due(window_of(1.9))
    window = window_of(2.3)
    assert schedule.grid_pass_due(window)
    assert schedule.pass_samples(window, final=False) == 2 * 16000
    assert schedule.pass_samples(window, final=True) == len(window)
    schedule.heard_end = 2.0
    assert not schedule.grid_pass_due(window_of(3.9))
    # A late pass (heard to 4.6 s) does not push back the next step, at 6 s.
    schedule.heard_end = 4.6
    assert not schedule.grid_pass_due(window_of(5.9))
    assert schedule.grid_pass_due(window_of(6.0))
    # Steps count from the window's start: from 1.5 s, the step after 4.6 s is at 5.5 s.
    assert not schedule.grid_pass_due(window_of(5.4, start=1.5))
    assert schedule.grid_pass_due(window_of(5.5, start=1.5))
    assert not PassSchedule(StreamingConfig(), BackendTraits()).grid_pass_due(window_of(4.0))


def test_heard_to_and_reset():
    schedule = PassSchedule(StreamingConfig(), BackendTraits())
    assert not schedule.heard_to(1.0, now=2.0)
    schedule.heard_end = 1.5
    assert schedule.heard_to(1.5, now=2.0) and not schedule.heard_to(1.6, now=2.0)
    assert schedule.heard_to(1.6, now=1.5)  # nothing after now to hear
    schedule.reset()
    assert schedule.heard_end is None


def test_room_keeps_a_window_within_one_backend_window():
    config = StreamingConfig()  # max window 24 s, min chunk 0.6 s
    whisper = PassSchedule(config, BackendTraits(window_seconds=30.0))
    assert whisper.room(window_of(10.0)) == pytest.approx(30.0 - 0.6 - 10.0)
    assert whisper.room(window_of(29.7)) == config.min_chunk_seconds  # a pass trims, then room
    short = PassSchedule(config, BackendTraits(window_seconds=8.0))
    assert short.room(window_of(2.0)) == pytest.approx(8.0 - 0.6 - 2.0)
    assert PassSchedule(config, BackendTraits()).room(window_of(0.0)) == 24.0  # no window: max

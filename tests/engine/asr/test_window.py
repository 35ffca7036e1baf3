"""AudioWindow: the stream clock, cuts (on a grid too) and which committed words it holds."""

from __future__ import annotations

import numpy as np
import pytest

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.window import AudioWindow


def seconds(n: float) -> np.ndarray:
    return np.zeros(int(n * 16000), dtype=np.float32)


def test_the_clock_counts_every_sample_and_cuts_only_move_the_start_forward():
    window = AudioWindow()
    window.append(seconds(3.0))
    assert (window.seconds, window.stream_seconds, window.new_samples) == (3.0, 3.0, 48000)
    window.drop_before(1.25)
    assert (window.start, window.seconds, window.stream_seconds) == (1.25, 1.75, 3.0)
    window.drop_before(0.5)  # before the start: nothing
    assert window.start == 1.25
    window.drop_before(9.0)  # past the end: the window empties, no further
    assert (window.start, len(window)) == (3.0, 0)


def test_keep_until_and_reset():
    window = AudioWindow()
    window.append(seconds(4.0))
    window.drop_before(1.0)
    window.keep_until(2.5)
    assert window.seconds == pytest.approx(1.5)
    window.trimmed = True
    window.reset()
    assert (window.start, window.segment_begin, window.seconds) == (4.0, 4.0, 0.0)
    assert window.new_samples == 0 and not window.trimmed


def test_a_cut_on_a_grid_falls_on_the_last_grid_point_before_it():
    window = AudioWindow(grid=2.0)
    window.append(seconds(9.0))
    window.drop_before(0.5)
    window.cut(5.3)  # grid points from the start: 2.5, 4.5, 6.5
    assert window.start == pytest.approx(4.5)
    plain = AudioWindow()
    plain.append(seconds(9.0))
    plain.cut(5.3)
    assert plain.start == pytest.approx(5.3)


def test_which_committed_words_the_window_holds():
    window = AudioWindow()
    window.append(seconds(10.0))
    window.drop_before(4.0)
    assert not window.contains(Word(" before", 3.5, 4.01))  # within the edge: before it
    assert window.contains(Word(" inside", 3.9, 4.1))
    assert window.holds_committed(Word(" inside", 3.9, 4.1))
    assert not window.holds_committed(Word(" left", 3.2, 3.5))


def test_with_a_forced_prefix_words_just_before_the_window_are_held_too():
    window = AudioWindow(forces_prefix=True)
    window.append(seconds(10.0))
    window.drop_before(4.0)
    assert window.holds_committed(Word(" near", 3.2, 3.5))  # within a second of the start
    assert not window.holds_committed(Word(" far", 2.5, 2.9))
    window.reset()  # a new segment: nothing of the one before is forced
    window.append(seconds(2.0))
    assert not window.holds_committed(Word(" last segment", 9.5, 9.9))


def test_appends_keep_the_audio_in_order_and_a_pass_view_is_never_overwritten():
    """The window grows a buffer in place; the view a pass was given stays what it heard
    through later appends, cuts, a trim of its end and a reset."""
    rng = np.random.default_rng(7)
    window, appended = AudioWindow(), []
    views = []
    for k in range(60):
        chunk = rng.standard_normal(int(rng.integers(1, 4000))).astype(np.float32)
        window.append(chunk)
        appended.append(chunk)
        if k % 7 == 0:
            views.append((window.samples, window.samples.copy()))
        if k % 11 == 10:
            window.drop_before(window.start + 0.1)
        if k == 40:
            window.keep_until(window.start + 0.5)
        if k == 50:
            window.reset()
            appended = []
    whole = np.concatenate(appended)
    assert np.array_equal(window.samples, whole[len(whole) - len(window) :])
    assert window.samples.dtype == np.float32
    assert all(np.array_equal(view, copy) for view, copy in views)

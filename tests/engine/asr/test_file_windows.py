"""The window planner of whole-file recognition, on scripted speech probabilities."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_rt.engine.asr.file_windows import WindowOptions, WindowPlanner
from desktop_rt.engine.audio.vad import FRAME_SAMPLES, FRAME_SECONDS

SMALL = WindowOptions(
    pad_seconds=4 * FRAME_SECONDS,
    long_pause_seconds=20 * FRAME_SECONDS,
    max_window_seconds=100 * FRAME_SECONDS,
    min_window_seconds=50 * FRAME_SECONDS,
    min_speech_seconds=0.0,
)


class Scripted:
    """Speech probabilities given in advance, one per frame."""

    def __init__(self, probabilities):
        self.probabilities = list(probabilities)
        self.i = 0

    def __call__(self, frame):
        p = self.probabilities[self.i]
        self.i += 1
        return p

    def reset(self):
        self.i = 0


class Loudness:
    """Speech wherever a frame is loud (the synthetic files are noise bursts and silence)."""

    def __call__(self, frame):
        return 1.0 if float(np.sqrt(np.mean(frame**2))) > 0.05 else 0.0

    def reset(self):
        pass


def frames_audio(n_frames: int) -> np.ndarray:
    """Audio whose every frame holds its own index, so frames can be traced through windows."""
    return np.repeat(np.arange(n_frames, dtype=np.float32), FRAME_SAMPLES)


def plan(probabilities, options=SMALL, chunk=3000):
    planner = WindowPlanner(Scripted(probabilities), options)
    audio = frames_audio(len(probabilities))
    windows = []
    for start in range(0, len(audio), chunk):
        windows += planner.feed(audio[start : start + chunk])
    return windows + planner.finish()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.2, 0.4, 0.6, 0.9]), min_size=1, max_size=600),
    st.integers(100, 9000),
)
def test_every_speech_frame_is_in_one_window_in_order(probabilities, chunk):
    windows = plan(probabilities, chunk=chunk)
    frames = np.concatenate([w.frames for w in windows]) if windows else np.zeros(0, int)
    assert np.all(np.diff(frames) > 0)  # in order, none twice
    speech = [i for i, p in enumerate(probabilities) if p >= SMALL.threshold]
    assert set(speech) <= set(frames.tolist())  # no speech frame lost
    for w in windows:
        assert len(w.frames) <= 100
        assert len(w.audio) == len(w.frames) * FRAME_SAMPLES
        # the audio of each frame is the file frame it says it is
        assert np.array_equal(w.audio[::FRAME_SAMPLES], w.frames.astype(np.float32))


def test_short_pauses_are_kept_whole_and_long_ones_keep_their_pads():
    speech, short, long = [0.9] * 10, [0.0] * 15, [0.0] * 60
    probabilities = [0.0] * 30 + speech + short + speech + long + speech + [0.0] * 30
    (window,) = plan(probabilities)
    pad = 4
    expected = (
        list(range(30 - pad, 30))
        + list(range(30, 65))  # speech, the whole short pause, speech
        + list(range(65, 65 + pad))  # the long pause's first pad
        + list(range(125 - pad, 135 + pad))  # its last pad, speech, the trailing pad
    )
    assert window.frames.tolist() == expected
    assert window.file_time(0.0) == pytest.approx((30 - pad) * FRAME_SECONDS)
    third = expected.index(125)
    assert window.file_time(third * FRAME_SECONDS + 0.01) == pytest.approx(
        125 * FRAME_SECONDS + 0.01
    )


def test_a_full_window_is_cut_in_its_longest_pause_after_the_minimum():
    probabilities = (
        [0.9] * 40
        + [0.0] * 8  # a longer pause, but before min_window (50 frames)
        + [0.9] * 10
        + [0.0] * 3
        + [0.9] * 10
        + [0.0] * 6  # the longest pause after 50 frames: the cut is in its middle
        + [0.9] * 60
    )
    first, second = plan(probabilities)
    assert first.frames[-1] == 40 + 8 + 10 + 3 + 10 + 3 - 1
    assert second.frames[0] == first.frames[-1] + 1
    assert first.speech[-1] == bool(second.speech[0]) is False


def test_speech_with_no_pause_is_cut_at_its_least_speech_like_frame():
    probabilities = [0.9] * 150
    probabilities[70] = 0.51
    first, _ = plan(probabilities)
    assert first.frames[-1] == 69


def test_a_window_of_too_little_speech_is_dropped():
    options = WindowOptions(min_speech_seconds=0.2)
    assert plan([0.0] * 50 + [0.9] * 3 + [0.0] * 50, options) == []
    assert len(plan([0.0] * 50 + [0.9] * 10 + [0.0] * 50, options)) == 1


def test_the_planner_holds_one_window_at_most_on_a_long_file():
    """30 minutes of 5 s bursts and 3 s pauses, fed in 1 s chunks."""
    planner = WindowPlanner(Loudness())
    rng = np.random.default_rng(0)
    held, seconds = 0.0, 0
    burst = (0.3 * rng.standard_normal(5 * 16000)).astype(np.float32)
    cycle = np.concatenate([burst, np.zeros(3 * 16000, np.float32)])
    windows = []
    while seconds < 30 * 60:
        for start in range(0, len(cycle), 16000):
            windows += planner.feed(cycle[start : start + 16000])
            held = max(held, planner.held_seconds)
        seconds += 8
    windows += planner.finish()
    options = planner.options
    assert held <= options.max_window_seconds + options.long_pause_seconds + 1.0
    assert all(w.seconds <= options.max_window_seconds for w in windows)
    assert sum(w.speech_seconds for w in windows) > 0.6 * 30 * 60


FIRST = WindowOptions(
    pad_seconds=SMALL.pad_seconds,
    long_pause_seconds=SMALL.long_pause_seconds,
    max_window_seconds=SMALL.max_window_seconds,
    min_window_seconds=SMALL.min_window_seconds,
    min_speech_seconds=0.0,
    first_window_seconds=30 * FRAME_SECONDS,
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, 0.2, 0.4, 0.6, 0.9]), min_size=1, max_size=600),
    st.integers(100, 9000),
)
def test_a_short_first_window_keeps_every_frame_once(probabilities, chunk):
    windows = plan(probabilities, FIRST, chunk=chunk)
    frames = np.concatenate([w.frames for w in windows]) if windows else np.zeros(0, int)
    assert np.all(np.diff(frames) > 0)  # in order, none twice
    speech = [i for i, p in enumerate(probabilities) if p >= FIRST.threshold]
    assert set(speech) <= set(frames.tolist())  # no speech frame lost
    if windows:
        assert len(windows[0].frames) <= 30
    for w in windows:
        assert len(w.frames) <= 100
        assert np.array_equal(w.audio[::FRAME_SAMPLES], w.frames.astype(np.float32))


def test_the_first_window_is_cut_after_half_of_it_and_the_rest_as_before():
    probabilities = (
        [0.9] * 10
        + [0.0] * 3  # a pause before half the first window (15 frames): not the cut
        + [0.9] * 4
        + [0.0] * 4  # the first window's cut is in the middle of this one
        + [0.9] * 200
    )
    first, *rest = plan(probabilities, FIRST)
    assert first.frames[-1] == 10 + 3 + 4 + 2 - 1
    # no pause after it: each later window is cut after min_window_seconds (50 frames), as before
    assert [len(w.frames) for w in rest[:-1]] == [50] * (len(rest) - 1)
    frames = np.concatenate([w.frames for w in [first, *rest]])
    assert frames.tolist() == list(range(frames[0], frames[-1] + 1))


def test_a_first_window_longer_than_the_others_changes_nothing():
    probabilities = [0.9] * 40 + [0.0] * 6 + [0.9] * 60 + [0.0] * 9 + [0.9] * 120
    longer = replace(FIRST, first_window_seconds=1000 * FRAME_SECONDS)
    got = [w.frames.tolist() for w in plan(probabilities, longer)]
    assert got == [w.frames.tolist() for w in plan(probabilities)]

"""Capture: the file-backed source, the push-to-talk feed, and PortAudio through a virtual ALSA mic."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from desktop_rt.engine.audio.sources import (
    CLOSED,
    ENDED,
    LOST,
    OPEN,
    FileAudioSource,
    SoundDeviceSource,
    SourceStatus,
    list_input_devices,
)
from desktop_rt.live.capture import CaptureFeed
from tests.support.clips import DATA


class Collector:
    """Gathers what a source or feed reports, with a way to wait for a condition."""

    def __init__(self):
        self.blocks: list[np.ndarray] = []
        self.statuses: list[SourceStatus] = []
        self.changed = threading.Condition()

    def block(self, samples):
        with self.changed:
            self.blocks.append(samples)
            self.changed.notify_all()

    def status(self, status):
        with self.changed:
            self.statuses.append(status)
            self.changed.notify_all()

    def states(self):
        return [s.state for s in self.statuses]

    def wait(self, predicate, timeout=10.0):
        with self.changed:
            assert self.changed.wait_for(predicate, timeout), "timed out"


class SessionRecorder:
    """The audio-sink side of a local session, recording the calls it gets in order."""

    def __init__(self):
        self.calls: list[tuple[str, int]] = []
        self.lock = threading.Lock()

    def append(self, samples):
        with self.lock:
            if self.calls and self.calls[-1][0] == "append":
                self.calls[-1] = ("append", self.calls[-1][1] + len(samples))
            else:
                self.calls.append(("append", len(samples)))

    def commit(self):
        with self.lock:
            self.calls.append(("commit", 0))

    def clear(self):
        with self.lock:
            self.calls.append(("clear", 0))


def tone(seconds: float, rate: int = 16000) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (0.3 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)


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


def _ptt_feed(source, sink, marks, **kw):
    return CaptureFeed(source, sink, on_turn=marks.append, measure_speech=False, **kw)


def test_push_to_talk_sends_preroll_and_audio_only_while_held_then_commits():
    source = FileAudioSource(tone(3.0), pace=10.0, autoplay=True)
    sink, marks = SessionRecorder(), []
    feed = _ptt_feed(source, sink, marks, preroll_seconds=0.2)
    feed.start()
    try:
        while feed.clock < 0.5:
            assert feed.flush()
        assert sink.calls == []  # gate closed: nothing leaves the machine
        feed.talk_down()
        while feed.clock < 1.5:
            assert feed.flush()
        feed.talk_up()
        assert feed.flush()
        feed.talk_down()
        feed.talk_up()  # a tap shorter than a turn is cleared, not committed
        assert feed.flush()
    finally:
        feed.stop()
    kinds = [c[0] for c in sink.calls]
    assert kinds[:2] == ["append", "commit"]
    first = sink.calls[0][1] / 16000
    assert 1.0 + 0.15 < first < 1.5 + 0.3  # about a second held, plus the preroll
    assert [m.kind for m in marks][:2] == ["started", "committed"]
    assert marks[0].at == pytest.approx(marks[1].at - first, abs=0.05)
    assert all(k != "commit" for k in kinds[2:])


def test_device_loss_commits_the_turn_held_and_reports_return():
    source = FileAudioSource(tone(2.0), pace=10.0)
    sink, marks, statuses = SessionRecorder(), [], []
    feed = CaptureFeed(
        source, sink, on_turn=marks.append, on_status=statuses.append, measure_speech=False
    )
    feed.start()
    try:
        feed.talk_down()
        while feed.clock < 0.5:
            assert feed.flush()
        source.simulate_loss()
        while LOST not in [s.state for s in statuses]:
            assert feed.flush()
        assert [c[0] for c in sink.calls] == ["append", "commit"]  # words so far are final
        source.simulate_return()
        while [s.state for s in statuses].count(OPEN) < 2:
            assert feed.flush()
        clock = feed.clock
        while feed.clock < clock + 0.3:
            assert feed.flush()
        feed.talk_up()
        assert feed.flush()
    finally:
        feed.stop()
    assert [c[0] for c in sink.calls] == ["append", "commit", "append", "commit"]
    assert [m.kind for m in marks] == ["started", "committed", "committed"]


def test_hands_free_sends_everything_and_loss_adds_trailing_silence():
    source = FileAudioSource(tone(1.0), pace=10.0)
    sink, statuses = SessionRecorder(), []
    feed = CaptureFeed(
        source, sink, hands_free=True, measure_speech=False, on_status=statuses.append
    )
    feed.start()
    try:
        while feed.clock < 0.4:
            assert feed.flush()
        source.simulate_loss()
        while LOST not in [s.state for s in statuses]:
            assert feed.flush()
        before = feed.clock * 16000
        after = sum(n for k, n in sink.calls if k == "append")
    finally:
        feed.stop()
    assert before >= 0.4 * 16000
    assert after - before >= CaptureFeed.LOSS_SILENCE_SECONDS * 16000
    assert all(k == "append" for k, _ in sink.calls)


def test_levels_and_speech_probability_are_reported():
    speech = FileAudioSource(DATA / "beckett.wav", pace=20.0)
    levels = []
    feed = CaptureFeed(speech, None, on_level=levels.append, level_interval=0.1)
    feed.start()
    try:
        assert speech.finished.wait(10)
        assert feed.flush()
    finally:
        feed.stop()
    assert len(levels) >= 50
    assert max(r.speech or 0.0 for r in levels) > 0.8  # Silero hears the speech
    assert -60 < max(r.dbfs for r in levels) < 0


def test_a_slow_consumer_drops_the_oldest_blocks_not_the_newest():
    source = FileAudioSource(tone(1.0), pace=1000.0)
    gate = threading.Event()

    class SlowSink(SessionRecorder):
        def append(self, samples):
            gate.wait(10)
            super().append(samples)

    sink = SlowSink()
    feed = CaptureFeed(source, sink, hands_free=True, measure_speech=False, max_queue_seconds=0.2)
    feed.start()
    try:
        assert source.finished.wait(10)
        deadline = time.monotonic() + 10
        while feed.dropped_blocks == 0 and time.monotonic() < deadline:
            source.finished.wait(0.01)
        gate.set()
        assert feed.flush()
    finally:
        gate.set()
        feed.stop()
    assert feed.dropped_blocks > 0


# --- PortAudio, through a virtual ALSA capture device ----------------------------------------


def _virtual_mic(home: Path, name: str) -> None:
    """An ALSA ``file`` PCM that reads a raw tone as its capture input (no sound card needed)."""
    raw = home / "in.raw"
    raw.write_bytes((tone(1.0) * 32767).astype("<f4").tobytes())
    (home / ".asoundrc").write_text(
        f'pcm.{name} {{\n type file\n slave.pcm "null"\n file "/dev/null"\n infile "{raw}"\n'
        f' format "raw"\n hint {{ show on description "virtual mic" }}\n}}\n'
    )


def test_sounddevice_source_waits_for_a_missing_device_and_opens_it_when_it_appears(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert all(d.name != "desktop_rt_test_mic" for d in list_input_devices(refresh=True))
    source = SoundDeviceSource("desktop_rt_test_mic", retry_seconds=0.1, stall_seconds=1.0)
    got = Collector()
    source.start(got.block, got.status)
    try:
        got.wait(lambda: LOST in got.states())
        assert "not available" in got.statuses[-1].message
        _virtual_mic(tmp_path, "desktop_rt_test_mic")  # "plugged in"
        got.wait(lambda: OPEN in got.states())
        got.wait(lambda: len(got.blocks) >= 3)
    finally:
        source.stop()
    assert got.states()[-1] == CLOSED
    assert got.blocks[0].dtype == np.float32 and got.blocks[0].ndim == 1
    assert source.samplerate == 16000
    assert "desktop_rt_test_mic" in [d.name for d in list_input_devices(refresh=True)]

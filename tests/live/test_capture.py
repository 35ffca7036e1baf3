"""The capture feed: push-to-talk gating and preroll, device loss, hands-free, levels, drops."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from desktop_rt.engine.audio.sources import LOST, OPEN, SILENT, FileAudioSource
from desktop_rt.live.capture import CaptureFeed
from tests.support.capture_support import SessionRecorder, StallingFileSource, tone
from tests.support.clips import DATA


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
    assert first > 1.0 + 0.15  # at least the second held, plus the preroll
    # Nothing from before the press beyond the preroll; how late the test's own talk_up is
    # taken in (a busy machine, 10x pace) only makes the turn longer, never shorter.
    assert marks[0].at >= 0.5 - 0.2 - 0.01
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


def test_a_slow_consumer_drops_the_oldest_blocks_not_the_newest(caplog):
    caplog.set_level(logging.INFO, logger="desktop_rt.live.capture")
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
    # Said once when it starts, and counted when the feed stops (the e2e test reads the count).
    messages = [r.getMessage() for r in caplog.records]
    assert sum("capture fell behind" in m for m in messages) == 1, messages
    assert any(f", {feed.dropped_blocks} blocks dropped" in m for m in messages), messages


def test_a_source_that_stops_delivering_is_reported_silent_and_the_turn_is_committed():
    """Issue 17: a stalled driver showed "listening" for 8 s; now SILENT after a second."""
    source = StallingFileSource(tone(3.0), pace=1.0)
    sink, marks, statuses = SessionRecorder(), [], []
    feed = CaptureFeed(
        source, sink, on_turn=marks.append, on_status=statuses.append, measure_speech=False
    )
    feed.start()
    try:
        feed.talk_down()
        while feed.clock < 0.3:
            assert feed.flush()
        source.stall()
        stalled_at = time.monotonic()
        deadline = stalled_at + 5
        while SILENT not in [s.state for s in statuses] and time.monotonic() < deadline:
            assert feed.flush()
            source.finished.wait(0.02)
        assert SILENT in [s.state for s in statuses]
        assert 0.9 < time.monotonic() - stalled_at < 2.5
        silent = next(s for s in statuses if s.state == SILENT)
        assert f"no audio from {source.name}" in silent.message.lower()
        assert [c[0] for c in sink.calls] == ["append", "commit"]  # the words so far are final
        source.resume()
        while [s.state for s in statuses][-1] != OPEN:
            assert feed.flush()
            source.finished.wait(0.02)
        clock = feed.clock
        while feed.clock < clock + 0.3:
            assert feed.flush()
        feed.talk_up()
        assert feed.flush()
    finally:
        feed.stop()
    assert [m.kind for m in marks] == ["started", "committed", "committed"]


def test_when_audio_first_flows_is_logged_once(caplog):
    """A device can take seconds to deliver its first block after it was opened (PulseAudio
    under load: 4.6 s); the log says when audio first flowed, which the end-to-end tests wait
    for before they speak (tests/e2e/desktop_session.py)."""
    source = StallingFileSource(tone(2.0), pace=10.0, name="slow mic")
    source.stall()  # opened, but nothing delivered yet
    feed = CaptureFeed(source, SessionRecorder(), hands_free=True, measure_speech=False)
    with caplog.at_level(logging.INFO, logger="desktop_rt.live.capture"):
        feed.start()
        try:
            assert feed.flush()
            assert not [r for r in caplog.records if "first audio" in r.getMessage()]
            source.resume()
            while feed.clock < 1.0:
                assert feed.flush()
        finally:
            feed.stop()
    first = [r.getMessage() for r in caplog.records if "first audio" in r.getMessage()]
    assert len(first) == 1 and first[0].startswith("capture from slow mic: first audio "), first

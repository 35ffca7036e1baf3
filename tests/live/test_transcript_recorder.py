"""Recorder: captions from session events, write-through history, turn times; the feed's clock map."""

from __future__ import annotations

import numpy as np
import pytest

from desktop_rt.engine.audio.sources import FileAudioSource
from desktop_rt.engine.protocol.events import (
    ErrorEvent,
    InputAudioBufferCleared,
    InputAudioBufferCommitted,
    InputAudioBufferSpeechStarted,
    InputAudioBufferSpeechStopped,
    TranscriptionCompleted,
    TranscriptionDelta,
    TranscriptionTentative,
)
from desktop_rt.history.store import TranscriptStore
from desktop_rt.history.writer import StoreWriter
from desktop_rt.live.capture import CaptureFeed, TurnMark
from desktop_rt.live.transcript_recorder import (
    CaptionTurn,
    SessionNotice,
    SpeechActivity,
    TranscriptRecorder,
)


@pytest.fixture
def writer(tmp_path):
    w = StoreWriter(tmp_path / "h.sqlite3")
    yield w
    w.close()


def saved_turns(writer):
    assert writer.flush()
    with TranscriptStore(writer.path) as store:
        sessions = store.sessions()
        return [] if not sessions else store.turns(sessions[0].id)


def test_deltas_are_written_through_tentative_is_not(writer):
    rec = TranscriptRecorder("s1", writer, model="whisper-base", mode="push_to_talk")
    [c] = rec.handle(TranscriptionTentative("i1", "Ever tried"))
    assert (c.committed, c.tentative, c.index) == ("", "Ever tried", 0)
    assert saved_turns(writer) == []  # nothing saved for tentative words
    [c] = rec.handle(TranscriptionDelta("i1", "Ever"))
    assert c.committed == "Ever" and c.tentative == ""  # the stale tail goes; a new one follows
    rec.handle(TranscriptionTentative("i1", " tried. Ever"))
    [c] = rec.handle(TranscriptionDelta("i1", " tried."))
    [t] = saved_turns(writer)
    assert (t.text, t.completed) == ("Ever tried.", False)
    rec.handle(InputAudioBufferCommitted("i1", None))
    [c] = rec.handle(TranscriptionCompleted("i1", "Ever tried. Ever failed.", 4.0))
    assert c.final and c.text == "Ever tried. Ever failed."
    [t] = saved_turns(writer)
    assert (t.text, t.completed) == ("Ever tried. Ever failed.", True)
    rec.end()
    assert writer.flush()
    with TranscriptStore(writer.path) as store:
        [s] = store.sessions()
        assert s.ended_at and s.model == "whisper-base" and s.mode == "push_to_talk"


def test_push_to_talk_times_come_from_key_presses_in_commit_order(writer):
    rec = TranscriptRecorder("s1", writer, origin=10.0)
    rec.turn_mark(TurnMark("started", 11.0))
    rec.handle(TranscriptionDelta("a", "one"))
    rec.turn_mark(TurnMark("committed", 13.0))
    rec.turn_mark(TurnMark("started", 15.0))
    rec.turn_mark(TurnMark("committed", 16.5))
    rec.handle(InputAudioBufferCommitted("a", None))
    rec.handle(InputAudioBufferCommitted("b", "a"))
    rec.handle(TranscriptionCompleted("a", "one", 2.0))
    [cb] = rec.handle(TranscriptionCompleted("b", "two", 1.5))
    assert (cb.start, cb.end, cb.index) == (5.0, 6.5, 1)
    turns = saved_turns(writer)
    assert [(t.item_id, t.start, t.end) for t in turns] == [("a", 1.0, 3.0), ("b", 5.0, 6.5)]


def test_hands_free_times_come_from_the_server_vad_mapped_to_the_feed_clock():
    rec = TranscriptRecorder("s1", None, origin=2.0, stream_to_clock=lambda s: s + 2.0)
    assert rec.handle(InputAudioBufferSpeechStarted("a", 1500)) == [SpeechActivity(True)]
    assert rec.handle(InputAudioBufferSpeechStopped("a", 3000)) == [SpeechActivity(False)]
    rec.handle(InputAudioBufferCommitted("a", None))
    [c] = rec.handle(TranscriptionCompleted("a", "hello", 1.5))
    assert (c.start, c.end) == (1.5, 3.0)


def test_a_cleared_turn_without_words_disappears(writer):
    rec = TranscriptRecorder("s1", writer)
    rec.handle(TranscriptionDelta("a", "kept"))
    rec.handle(InputAudioBufferCommitted("a", None))
    rec.handle(TranscriptionTentative("b", "uh"))
    updates = rec.handle(InputAudioBufferCleared())
    assert updates == [CaptionTurn("b", 1, "", "", removed=True)]
    assert [c.item_id for c in rec.captions()] == ["a"]
    assert rec.committed_text == "kept"


def test_errors_become_notices():
    rec = TranscriptRecorder("s1")
    [n] = rec.handle(ErrorEvent("the buffer is empty", "input_audio_buffer_commit_empty"))
    assert n == SessionNotice("error", "the buffer is empty", "input_audio_buffer_commit_empty")


def test_feed_maps_session_audio_back_to_its_clock_across_push_to_talk_gaps():
    class Sink:
        def append(self, s):
            pass

        def commit(self):
            pass

        def clear(self):
            pass

    source = FileAudioSource(np.zeros(16000 * 3, dtype=np.float32), pace=20.0)
    origins = []
    feed = CaptureFeed(source, None, measure_speech=False, preroll_seconds=0.0)
    feed.start()
    try:
        while feed.clock < 0.5:
            assert feed.flush()
        feed.set_sink(Sink(), origins.append)
        assert feed.flush()
        feed.talk_down()
        assert feed.flush()
        down1 = feed.clock
        while feed.clock < down1 + 0.4:
            assert feed.flush()
        feed.talk_up()
        assert feed.flush()
        sent1 = feed.appended_samples / 16000
        while feed.clock < down1 + 1.0:
            assert feed.flush()
        feed.talk_down()
        assert feed.flush()
        down2 = feed.clock
        while feed.clock < down2 + 0.2:
            assert feed.flush()
        feed.talk_up()
        assert feed.flush()
    finally:
        feed.stop()
    assert origins and origins[0] >= 0.5
    assert feed.clock_at(0.0) == pytest.approx(down1, abs=0.03)
    assert feed.clock_at(sent1 + 0.01) == pytest.approx(down2 + 0.01, abs=0.03)


def test_non_speech_output_never_reaches_captions_or_history(writer):
    """Issue 17: a tentative run of underscores drew lines across the captions; tags were saved."""
    rec = TranscriptRecorder("s1", writer, mode="push_to_talk")
    [c] = rec.handle(TranscriptionTentative("i1", " ________________________________"))
    assert c.text == ""
    [c] = rec.handle(TranscriptionDelta("i1", " [MUSIC]"))
    assert c.committed == "" and saved_turns(writer) == []  # a turn of sound tags is not saved
    rec.handle(TranscriptionDelta("i1", " Ever tried."))
    [c] = rec.handle(TranscriptionTentative("i1", " (breath) Ever ____"))
    assert (c.committed, c.tentative) == (" Ever tried.", " Ever")
    [c] = rec.handle(
        TranscriptionCompleted("i1", " [MUSIC] Ever tried. Ever failed. (breath)", 4.0)
    )
    assert c.committed == " Ever tried. Ever failed."
    [t] = saved_turns(writer)
    assert t.text == " Ever tried. Ever failed."
    assert rec.committed_text == "Ever tried. Ever failed."


def test_the_session_records_every_mode_used_not_only_the_first(writer):
    """Issue 17: a session switched from push-to-talk to hands-free kept "push_to_talk"."""
    rec = TranscriptRecorder("s1", writer, mode="push_to_talk")
    rec.turn_mark(TurnMark("started", 0.0))
    rec.turn_mark(TurnMark("committed", 2.0))
    rec.handle(InputAudioBufferCommitted("a", None))
    rec.handle(TranscriptionCompleted("a", "First turn.", 2.0))
    assert writer.flush()
    with TranscriptStore(writer.path) as store:
        assert store.sessions()[0].mode == "push_to_talk"
    rec.handle(InputAudioBufferSpeechStarted("b", 3000))  # the user switched to hands-free
    rec.handle(TranscriptionCompleted("b", "Second turn.", 1.0))
    rec.end()
    assert writer.flush()
    with TranscriptStore(writer.path) as store:
        [session] = store.sessions()
    assert session.mode == "push_to_talk,hands_free"
    assert session.modes == ("push_to_talk", "hands_free")


def test_a_session_that_starts_hands_free_says_so(writer):
    rec = TranscriptRecorder("s1", writer, mode="push_to_talk")  # the mode it was opened in
    rec.handle(InputAudioBufferSpeechStarted("a", 500))
    rec.handle(TranscriptionCompleted("a", "Hello.", 1.0))
    assert writer.flush()
    with TranscriptStore(writer.path) as store:
        assert store.sessions()[0].mode == "hands_free"


def test_a_quit_that_cannot_wait_keeps_the_words_heard_but_not_committed(writer):
    """bench_app's 20 quits under load: 5 saved nothing while the recognizer was still busy."""
    rec = TranscriptRecorder("s1", writer, mode="push_to_talk")
    rec.handle(TranscriptionDelta("i1", "Ever tried."))
    rec.handle(TranscriptionTentative("i1", " Ever failed"))
    rec.handle(TranscriptionTentative("i2", "No matter"))  # a turn with nothing committed yet
    rec.handle(TranscriptionCompleted("i0", "Done.", 1.0))  # finished turns stay as they are
    assert rec.save_unfinished() == 2
    turns = {t.text: t.completed for t in saved_turns(writer)}
    assert turns == {"Ever tried. Ever failed": False, "No matter": False, "Done.": True}
    rec.handle(TranscriptionCompleted("i2", "No matter, try again.", 2.0))  # a late commit wins
    assert {t.text for t in saved_turns(writer)} == {
        "Ever tried. Ever failed",
        "No matter, try again.",
        "Done.",
    }

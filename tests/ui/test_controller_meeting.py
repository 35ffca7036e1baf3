"""Meeting mode in the window: the microphone ("You") and what the computer plays ("Others").

The microphone is file-backed (no physical one here); system audio is a clip played into a real
PulseAudio daemon's output and captured from its monitor, as the app does on a desktop.
"""

from __future__ import annotations

import pytest

from desktop_rt.config import HANDS_FREE, MEETING, AudioSettings, ServerSettings, Settings
from desktop_rt.engine.audio.sources import FileAudioSource
from desktop_rt.history.store import TranscriptStore
from desktop_rt.live.meeting import MeetingSession
from tests.support.clips import DATA, reference_text, wer
from tests.support.pulse_daemon import play, pulse_daemon

pytestmark = pytest.mark.slow


def test_the_window_captions_both_streams_with_their_speakers(make_app, qtbot, tmp_path):
    daemon = pulse_daemon()
    mic = FileAudioSource(DATA / "ss-0870.wav", autoplay=False)
    settings = Settings().with_group(
        server=ServerSettings(port=0), audio=AudioSettings(mode=HANDS_FREE, source=MEETING)
    )
    app = make_app(mic, settings=settings)
    window, controller = app.window, app.controller
    meeting = controller.live
    assert isinstance(meeting, MeetingSession)
    qtbot.waitUntil(lambda: meeting.system.feed.clock > 0.2, timeout=20_000)  # capturing
    player = play(daemon, "ss-0880")
    mic.play()

    def finals() -> set[str | None]:
        return {t.speaker for t in window.captions.turns() if t.final}

    qtbot.waitUntil(lambda: finals() == {"You", "Others"}, timeout=90_000)
    assert player.wait(60) == 0
    assert mic.finished.wait(60)  # a turn may end mid-clip: stop only once all of it was heard
    text = window.captions.document().toPlainText()
    assert "You: " in text and "Others: " in text
    uid = meeting.uid
    stopping = controller.stop_listening()
    assert stopping is not None
    qtbot.waitUntil(lambda: not stopping.is_alive(), timeout=60_000)
    controller.writer.flush()
    with TranscriptStore(tmp_path / "history.sqlite3") as store:
        [session] = [s for s in store.sessions() if s.uid == uid]
        turns = store.turns(session.id)
    said = {w: " ".join(t.text for t in turns if t.speaker == w) for w in ("You", "Others")}
    assert wer(reference_text("ss-0870"), said["You"]) <= 0.25, said
    assert wer(reference_text("ss-0880"), said["Others"]) <= 0.25, said

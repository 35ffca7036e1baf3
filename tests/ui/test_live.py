"""End to end through the real window, server and model, with a file playing as the microphone."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt

from desktop_rt.config import HANDS_FREE
from desktop_rt.engine.audio.sources import FileAudioSource
from desktop_rt.history.export import from_json, to_json, to_srt
from desktop_rt.history.store import TranscriptStore
from tests.support.clips import DATA, read_clip, reference_text
from tests.support.ui_support import word_recall

pytestmark = pytest.mark.slow


def final_turns(window):
    return [t for t in window.captions.turns() if t.final]


def test_push_to_talk_with_the_space_bar_gives_the_transcript_in_window_and_history(
    make_app, qtbot
):
    source = FileAudioSource(DATA / "beckett.wav", pace=2.0, autoplay=False)
    app = make_app(source)
    window, controller = app.window, app.controller
    qtbot.waitUntil(lambda: "listening" in window.status_panel.mic_label.text(), timeout=10_000)
    assert window.status_panel.server_label.text().startswith("ws://127.0.0.1:")
    tentative_seen = []
    controller.bridge.caption.connect(
        lambda t: tentative_seen.append(t.tentative) if t.tentative else None
    )

    window.activateWindow()
    qtbot.keyPress(window, Qt.Key.Key_Space)
    assert controller.talking
    source.play()
    qtbot.waitUntil(source.finished.is_set, timeout=30_000)
    qtbot.keyRelease(window, Qt.Key.Key_Space)
    # The hold ends once no auto-repeat press followed within the grace period.
    qtbot.waitUntil(lambda: not controller.talking, timeout=1_000)

    qtbot.waitUntil(lambda: bool(final_turns(window)), timeout=60_000)
    [turn] = final_turns(window)
    reference = reference_text("beckett")
    assert word_recall(reference, turn.committed) >= 0.8, turn.committed
    assert window.captions.committed_text() == turn.committed.strip()
    assert tentative_seen, "tentative words should show while talking"

    controller.writer.flush()
    with TranscriptStore(controller.history_path) as store:
        [session] = store.sessions()
        [saved] = store.turns(session.id)
        assert saved.completed and saved.text == turn.committed
        assert 0.0 <= saved.start < 1.0 and saved.end == pytest.approx(source.duration, abs=1.5)
        assert session.mode == "push_to_talk" and session.model == "whisper-base"
        transcript = store.transcript(session.id)
    assert transcript.text == turn.committed.strip()
    assert from_json(to_json(transcript)).text == transcript.text  # exports match the history
    assert "00:00:0" in to_srt(transcript)


def test_hands_free_splits_a_clip_with_pauses_into_turns(make_app, qtbot):
    gap = np.zeros(int(16000 * 1.5), dtype=np.float32)
    names = ["ss-0880", "ss-0930"]
    audio = np.concatenate([gap[:8000], read_clip(names[0]), gap, read_clip(names[1]), gap])
    source = FileAudioSource(audio, pace=2.0, autoplay=False, name="two sentences")
    app = make_app(source, mode=HANDS_FREE)
    window = app.window
    assert not window.talk_button.isEnabled() and window.hf_button.isChecked()
    qtbot.waitUntil(lambda: "listening" in window.status_panel.mic_label.text(), timeout=10_000)
    source.play()
    qtbot.waitUntil(lambda: len(final_turns(window)) >= 2, timeout=60_000)
    turns = final_turns(window)
    assert len(turns) == 2, [t.committed for t in turns]
    for turn, name in zip(turns, names, strict=True):
        assert word_recall(reference_text(name), turn.committed) >= 0.7, (name, turn.committed)
    assert turns[0].start < turns[1].start
    assert turns[1].start == pytest.approx(
        0.5 + 2.99 + 1.5, abs=0.6
    )  # where the 2nd sentence begins


def test_device_loss_mid_turn_keeps_the_text_and_recovers(make_app, qtbot):
    source = FileAudioSource(DATA / "beckett.wav", pace=2.0, autoplay=False)
    app = make_app(source)
    window, controller = app.window, app.controller
    qtbot.waitUntil(lambda: "listening" in window.status_panel.mic_label.text(), timeout=10_000)
    controller.talk_down()
    source.play()
    qtbot.waitUntil(lambda: source.position > 4.5, timeout=20_000)
    source.simulate_loss()
    qtbot.waitUntil(lambda: "unavailable" in window.status_panel.mic_label.text(), timeout=10_000)
    assert "stopped delivering sound" in window.status_panel.message
    qtbot.waitUntil(lambda: bool(final_turns(window)), timeout=60_000)  # the words so far are final
    first = final_turns(window)[0].committed
    assert word_recall("Ever tried. Ever failed.", first) >= 0.75, first

    source.simulate_return()
    qtbot.waitUntil(lambda: "listening" in window.status_panel.mic_label.text(), timeout=10_000)
    assert window.status_panel.message == ""
    qtbot.waitUntil(source.finished.is_set, timeout=30_000)
    controller.talk_up()
    qtbot.waitUntil(lambda: len(final_turns(window)) == 2, timeout=60_000)
    assert window.captions.toPlainText().startswith(first.strip())  # earlier text kept
    assert word_recall("Fail again. Fail better.", final_turns(window)[1].committed) >= 0.5

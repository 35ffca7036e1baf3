"""Holding Space: auto-repeat that arrives as real release/press pairs is one hold, one turn;
Space talks only from the Live view; every view shows when audio is being recorded."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication

from desktop_rt.config import HANDS_FREE
from desktop_rt.engine.audio.sources import FileAudioSource
from desktop_rt.ui.talk_key import LOST_MESSAGE
from tests.support.clips import DATA, reference_text
from tests.support.ui_support import word_recall

pytestmark = pytest.mark.slow


def send_space(widget, kind: QEvent.Type) -> None:
    """A Space event that does NOT say it is an auto-repeat, as X11 sends them to a busy app."""
    event = QKeyEvent(kind, Qt.Key.Key_Space, Qt.KeyboardModifier.NoModifier, " ", False, 1)
    QApplication.sendEvent(widget, event)


class BusyThread:
    """Keeps the interpreter busy, as the transcription threads do, so the GIL changes hands."""

    def __init__(self):
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._spin, daemon=True)

    def _spin(self) -> None:
        n = 0
        while not self.stop.is_set():
            n = (n * 31 + 7) % 1_000_003

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def test_holding_space_through_false_releases_is_one_turn(make_app, qtbot):
    """Issue 17: a 9.5 s hold gave 10 turns; the app trusted isAutoRepeat()."""
    source = FileAudioSource(DATA / "beckett.wav", pace=2.0, autoplay=False)
    app = make_app(source)
    window, controller = app.window, app.controller
    qtbot.waitUntil(lambda: "listening" in window.status_panel.mic_label.text(), timeout=10_000)
    window.activateWindow()
    qtbot.waitActive(window)
    window.captions.setFocus()
    changes: list[bool] = []
    controller.talking_changed.connect(changes.append)
    target = QApplication.focusWidget()
    pairs = {"sent": 0, "pressed": 0}

    def press() -> None:
        send_space(target, QEvent.Type.KeyPress)
        pairs["pressed"] += 1

    def repeat() -> None:  # what the X server sends for a held key, every 33 ms
        send_space(target, QEvent.Type.KeyRelease)
        # The paired press reaches a busy app a little later: the hold must span the gap.
        QTimer.singleShot(15, press)
        pairs["sent"] += 1

    timer = QTimer()
    timer.setInterval(33)
    timer.timeout.connect(repeat)
    with BusyThread():
        send_space(target, QEvent.Type.KeyPress)
        assert controller.talking  # recording starts with the press
        source.play()
        timer.start()
        qtbot.waitUntil(source.finished.is_set, timeout=30_000)
        timer.stop()
        qtbot.waitUntil(lambda: pairs["pressed"] == pairs["sent"])
        send_space(target, QEvent.Type.KeyRelease)
        qtbot.waitUntil(lambda: not controller.talking, timeout=2_000)
    assert pairs["sent"] > 40  # a 5 s hold (fewer ticks when the machine is loaded)
    assert changes == [True, False]
    qtbot.waitUntil(lambda: any(t.final for t in window.captions.turns()), timeout=60_000)
    [turn] = window.captions.turns()
    assert word_recall(reference_text("beckett"), turn.committed) >= 0.8, turn.committed


def test_space_talks_only_from_the_live_view_and_every_view_shows_recording(make_app, qtbot):
    """Issue 17: Space recorded from the History tab, and nothing on that tab showed it."""
    source = FileAudioSource(DATA / "beckett.wav", pace=2.0, autoplay=False)
    app = make_app(source)
    window, controller, tray = app.window, app.controller, app.tray
    window.activateWindow()
    qtbot.waitActive(window)
    assert "Recording" not in window.windowTitle() and "recording" not in tray.toolTip()
    window.tabs.setCurrentWidget(window.history)
    window.history.sessions.setFocus()
    qtbot.waitUntil(window.history.sessions.hasFocus)
    qtbot.keyPress(window.history.sessions, Qt.Key.Key_Space)
    assert not controller.talking
    qtbot.keyRelease(window.history.sessions, Qt.Key.Key_Space)
    window.history.search.setFocus()
    qtbot.keyClick(window.history.search, Qt.Key.Key_Space)
    qtbot.keyClick(window.history.search, Qt.Key.Key_A)
    assert window.history.search.text() == " a" and not controller.talking  # types a space

    window.tabs.setCurrentWidget(window.live)
    window.captions.setFocus()
    qtbot.waitUntil(window.captions.hasFocus)
    qtbot.keyPress(window.captions, Qt.Key.Key_Space)
    assert controller.talking and controller.recording
    history_tab = window.tabs.tabText(window.tabs.indexOf(window.history))
    assert "Recording" in window.windowTitle() and "Recording" in history_tab
    assert "recording" in tray.toolTip()
    window.tabs.setCurrentWidget(window.history)  # switching tabs mid-hold: the badge stays
    qtbot.keyRelease(window.history.search, Qt.Key.Key_Space)  # the release ends the hold anyway
    qtbot.waitUntil(lambda: not controller.talking, timeout=2_000)
    history_tab = window.tabs.tabText(window.tabs.indexOf(window.history))
    assert "Recording" not in window.windowTitle() and "Recording" not in history_tab
    assert "recording" not in tray.toolTip()

    window.live.listen_button.setFocus()  # a focused button is pressed by Space, as usual
    qtbot.keyClick(window.live.listen_button, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: not controller.listening, timeout=2_000)
    assert not controller.talking


def test_hands_free_listening_is_shown_as_recording(make_app, qtbot):
    source = FileAudioSource(DATA / "beckett.wav", pace=2.0, autoplay=False)
    app = make_app(source, mode=HANDS_FREE)
    assert app.controller.recording
    assert "Recording" in app.window.windowTitle() and "recording" in app.tray.toolTip()
    app.controller.set_mode("push_to_talk")
    assert not app.controller.recording and "Recording" not in app.window.windowTitle()


def test_a_hold_whose_release_cannot_be_seen_ends_with_a_status(make_app, qtbot):
    """Offscreen, Space's state cannot be read: the keyboard leaving ends the hold, and says so."""
    source = FileAudioSource(DATA / "beckett.wav", pace=2.0, autoplay=False)
    app = make_app(source)
    window, controller = app.window, app.controller
    window.activateWindow()
    qtbot.waitActive(window)
    window.captions.setFocus()
    qtbot.waitUntil(window.captions.hasFocus)
    send_space(window.captions, QEvent.Type.KeyPress)
    assert controller.talking
    QApplication.sendEvent(window, QEvent(QEvent.Type.WindowDeactivate))
    assert not controller.talking  # not left recording with no key to stop it
    assert window.status_panel.message_label.text() == LOST_MESSAGE
    assert window.status_panel.message_label.isVisibleTo(window)

"""Importing an audio file in the window: the menu item, a drop, progress, cancel, errors."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication, QFileDialog

from desktop_rt.engine.audio.sources import FileAudioSource
from desktop_rt.history.store import TranscriptStore
from desktop_rt.live.file_import import IMPORT_MODE
from desktop_rt.ui.shortcuts import SHORTCUTS, help_text
from tests.support.clips import DATA, reference_text, wer

BECKETT = DATA / "beckett.wav"
WAIT_MS = 180_000


def silent_app(make_app):
    return make_app(FileAudioSource(np.zeros(16000, dtype=np.float32)))


def drop(window, path):
    """What the window gets when a file manager drops ``path`` on it."""
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    where, action = QPointF(20, 20), Qt.DropAction.CopyAction
    buttons, keys = Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier
    enter = QDragEnterEvent(where.toPoint(), action, mime, buttons, keys)
    QApplication.sendEvent(window, enter)
    assert enter.isAccepted()
    dropped = QDropEvent(where, action, mime, buttons, keys)
    QApplication.sendEvent(window, dropped)
    assert dropped.isAccepted()


def imported_sessions(app):
    with TranscriptStore(app.controller.history_path) as store:
        rows = [row for row in store.sessions() if row.mode == IMPORT_MODE]
        return [(row, " ".join(t.text for t in store.turns(row.id))) for row in rows]


def check_shown(app, qtbot, result):
    window = app.window
    assert window.tabs.currentWidget() is window.history
    qtbot.waitUntil(
        lambda: window.history.selected_session_id() == result.session_id, timeout=10_000
    )
    qtbot.waitUntil(lambda: window.history.turns.count() > 0, timeout=10_000)
    [(row, text)] = imported_sessions(app)
    assert row.title == "beckett.wav" and row.id == result.session_id
    assert wer(reference_text("beckett"), text) < 0.1
    assert not window.import_row.isVisible()
    assert "Imported beckett.wav" in window.status_panel.message_label.text()


def test_the_menu_item_imports_a_file_into_the_history(make_app, qtbot, monkeypatch):
    app = silent_app(make_app)
    window, importer = app.window, app.controller.importer
    assert window.import_action.shortcut().toString() == SHORTCUTS["import"].keys == "Ctrl+O"
    assert "Ctrl+O" in help_text()
    monkeypatch.setattr(QFileDialog, "getOpenFileName", lambda *a, **k: (str(BECKETT), ""))
    rows: list[str] = []
    importer.progress.connect(lambda _p: rows.append(window.import_row.text))
    with qtbot.waitSignal(importer.finished, timeout=WAIT_MS) as done:
        window.import_action.trigger()
        assert window.import_row.isVisible()
        assert window.import_row.text == "Importing beckett.wav: 0%"
    assert rows and rows[-1] == "Importing beckett.wav: 100%"
    assert all(r.startswith("Importing beckett.wav: ") and r.endswith("%") for r in rows)
    check_shown(app, qtbot, done.args[0])
    assert app.controller.listening  # live listening went on during the import


def test_a_dropped_file_is_imported(make_app, qtbot):
    app = silent_app(make_app)
    assert app.window.acceptDrops()
    with qtbot.waitSignal(app.controller.importer.finished, timeout=WAIT_MS) as done:
        drop(app.window, BECKETT)
    check_shown(app, qtbot, done.args[0])


def test_cancel_stops_the_import_and_saves_nothing(make_app, qtbot):
    app = silent_app(make_app)
    window, importer = app.window, app.controller.importer
    with qtbot.waitSignal(importer.cancelled, timeout=WAIT_MS) as cancelled:
        assert window.import_file(BECKETT)
        with qtbot.waitSignal(importer.failed) as refused:  # one import at a time
            assert not window.import_file(BECKETT)
        assert "still being imported" in refused.args[0]
        assert window.import_row.isVisible()
        qtbot.mouseClick(window.import_row.cancel_button, Qt.MouseButton.LeftButton)
    assert cancelled.args == ["beckett.wav"]
    assert not window.import_row.isVisible() and not importer.busy
    assert "cancelled" in window.status_panel.message_label.text()
    app.controller.writer.flush()
    assert imported_sessions(app) == []
    with qtbot.waitSignal(importer.finished, timeout=WAIT_MS):  # the next one goes through
        window.import_file(BECKETT)


@pytest.mark.parametrize("content", [b"not audio at all " * 300, b""], ids=["garbage", "empty"])
def test_a_file_that_is_not_audio_shows_an_error(make_app, qtbot, tmp_path, content):
    app = silent_app(make_app)
    bad = tmp_path / "notes.mp3"
    bad.write_bytes(content)
    with qtbot.waitSignal(app.controller.importer.failed, timeout=WAIT_MS) as failed:
        drop(app.window, bad)
    assert "notes.mp3" in failed.args[0]
    label = app.window.status_panel.message_label
    assert label.isVisible() and "notes.mp3 could not be" in label.text()
    assert not app.window.import_row.isVisible()
    assert imported_sessions(app) == []

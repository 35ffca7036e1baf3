"""History view over a real SQLite file: browse, search, rename, delete, copy, export, off the UI thread."""

from __future__ import annotations

import json
import threading

import pytest
from PySide6.QtGui import QGuiApplication

from desktop_rt.history.export import FORMATS, export
from desktop_rt.history.store import TranscriptStore
from desktop_rt.ui.widgets.history_view import HistoryView


@pytest.fixture
def history(tmp_path, qtbot):
    path = tmp_path / "history.sqlite3"
    with TranscriptStore(path) as store:
        store.begin_session("s1", started_at="2026-03-01T09:00:00+01:00", language="en")
        store.save_turn(
            "s1", "a", text="Ever tried. Ever failed.", start=0.2, end=3.1, completed=True
        )
        store.save_turn("s1", "b", text="No matter.", start=5.0, end=6.0, completed=True)
        store.begin_session("s2", started_at="2026-03-02T10:00:00+01:00")
        store.save_turn(
            "s2",
            "a",
            text="Try again. Fail again. Fail better.",
            start=1.0,
            end=4.0,
            completed=True,
        )
    view = HistoryView(path)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.loaded):
        view.show()
    qtbot.waitExposed(view)
    yield view
    view.close_store()


def shown_turns(view):
    return [view.turns.item(i).text() for i in range(view.turns.count())]


def select(view, qtbot, row):
    if view.sessions.currentRow() == row:
        return
    with qtbot.waitSignal(view.loaded):
        view.sessions.setCurrentRow(row)


def saved(view, call):
    with TranscriptStore(view._path) as store:
        return call(store)


def test_browse_newest_first_and_show_turns_with_times(history, qtbot):
    assert history.sessions.count() == 2
    assert history.sessions.item(0).text().startswith("2026-03-02 10:00")
    select(history, qtbot, 1)
    assert shown_turns(history) == ["[00:00]  Ever tried. Ever failed.", "[00:05]  No matter."]


def test_search_filters_sessions(history, qtbot):
    history.search.setText("better")
    qtbot.waitUntil(lambda: history.sessions.count() == 1)
    qtbot.waitUntil(lambda: bool(shown_turns(history)) and "Fail better" in shown_turns(history)[0])
    history.search.clear()
    qtbot.waitUntil(lambda: history.sessions.count() == 2)


def test_rename_and_delete(history, qtbot):
    select(history, qtbot, 1)
    session_id = history.selected_session_id()
    with qtbot.waitSignal(history.loaded):
        history.rename(session_id, "Beckett reading")
    assert history.selected_session_id() == session_id
    assert history.title.text() == "Beckett reading"
    assert any(history.sessions.item(i).text().startswith("Beckett reading") for i in range(2))
    with qtbot.waitSignal(history.loaded):
        history.delete(session_id)
    assert history.sessions.count() == 1
    assert saved(history, lambda store: store.session(session_id)) is None


def test_copy_a_turn_and_all(history, qtbot):
    select(history, qtbot, 1)
    history.turns.setCurrentRow(1)
    history.copy_turns()
    assert QGuiApplication.clipboard().text() == "No matter."
    with qtbot.waitSignal(history.copied):
        history.copy_all()
    assert QGuiApplication.clipboard().text() == "Ever tried. Ever failed. No matter."


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_exports_match_the_history(history, qtbot, tmp_path, fmt):
    select(history, qtbot, 1)
    session_id = history.selected_session_id()
    with qtbot.waitSignal(history.exported) as done:
        history.export(session_id, tmp_path / f"out.{fmt}")
    path = done.args[0]
    assert path == tmp_path / f"out.{fmt}"
    written = path.read_text(encoding="utf-8")
    assert written == export(saved(history, lambda store: store.transcript(session_id)), fmt)
    for phrase in ("Ever tried.", "No matter."):
        assert phrase in written
    if fmt == "srt":
        assert "00:00:05,000 --> 00:00:06,000" in written
    if fmt == "json":
        doc = json.loads(written)
        assert doc["text"] == "Ever tried. Ever failed. No matter." and doc["language"] == "en"
    assert str(path) in history.status.text()


def test_export_to_a_missing_folder_is_a_clear_error(history, qtbot, tmp_path):
    select(history, qtbot, 0)
    with qtbot.waitSignal(history.failed) as failed:
        history.export(history.selected_session_id(), tmp_path / "nope" / "out.txt")
    assert "does not exist" in failed.args[0]
    assert "does not exist" in history.status.text() and history.status.isVisible()
    assert not (tmp_path / "nope").exists()


def test_history_io_runs_off_the_ui_thread_and_shows_that_it_is_busy(history, qtbot):
    release = threading.Event()
    ran_on: list[threading.Thread] = []

    def slow(store):
        ran_on.append(threading.current_thread())
        release.wait(10)
        return store.sessions()

    history.jobs.run(slow, lambda _rows: None, lambda exc: None)
    assert history.busy.isVisible()
    with qtbot.waitSignal(history.loaded):
        history.refresh()  # queued behind the slow job; the UI thread is not waiting
        release.set()
    assert ran_on and ran_on[0] is not threading.main_thread()
    qtbot.waitUntil(lambda: not history.busy.isVisible())


def test_a_history_that_cannot_be_opened_says_why(tmp_path, qtbot):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    view = HistoryView(blocker / "history.sqlite3")
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.failed) as failed:
        view.refresh()
    assert "Could not open" in failed.args[0] and view.title.text() == failed.args[0]
    assert not view.export_button.isEnabled()
    view.close_store()


def test_empty_history_says_so(tmp_path, qtbot):
    view = HistoryView(tmp_path / "empty.sqlite3")
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.loaded):
        view.refresh()
    assert view.title.text() == "No saved sessions yet."
    assert not view.export_button.isEnabled()
    view.close_store()


def test_a_search_with_no_match_says_so(history, qtbot):
    """Issue 17: an empty search said "No saved sessions yet."."""
    with qtbot.waitSignal(history.loaded, timeout=5_000):
        history.search.setText("zebra crossing")
    assert history.sessions.count() == 0
    assert history.title.text() == "No session matches “zebra crossing”."
    with qtbot.waitSignal(history.loaded, timeout=5_000):
        history.search.clear()
    assert history.sessions.count() == 2


def test_non_speech_saved_by_older_versions_is_not_shown(tmp_path, qtbot):
    path = tmp_path / "history.sqlite3"
    with TranscriptStore(path) as store:
        store.begin_session("s1", started_at="2026-03-01T09:00:00+01:00")
        store.save_turn("s1", "a", text=" [MUSIC] Hello there. ____", start=0.0, completed=True)
        store.save_turn("s1", "b", text=" (breath)", start=2.0, completed=True)
    view = HistoryView(path)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.loaded):
        view.show()
    try:
        assert shown_turns(view) == ["[00:00]  Hello there."]
        with TranscriptStore(path) as store:
            assert store.transcript(store.sessions()[0].id).text == "Hello there."
    finally:
        view.close_store()

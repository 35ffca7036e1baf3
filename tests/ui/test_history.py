"""History view over a real SQLite file: browse, search, rename, delete, copy, export."""

from __future__ import annotations

import json

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
    view.show()
    qtbot.waitExposed(view)
    yield view
    view.close_store()


def shown_turns(view):
    return [view.turns.item(i).text() for i in range(view.turns.count())]


def test_browse_newest_first_and_show_turns_with_times(history):
    assert history.sessions.count() == 2
    assert history.sessions.item(0).text().startswith("2026-03-02 10:00")
    history.sessions.setCurrentRow(1)
    assert shown_turns(history) == ["[00:00]  Ever tried. Ever failed.", "[00:05]  No matter."]


def test_search_filters_sessions(history, qtbot):
    history.search.setText("better")
    qtbot.waitUntil(lambda: history.sessions.count() == 1)
    assert "Fail better" in shown_turns(history)[0]
    history.search.clear()
    qtbot.waitUntil(lambda: history.sessions.count() == 2)


def test_rename_and_delete(history):
    history.sessions.setCurrentRow(1)
    session_id = history.selected_session_id()
    history.rename(session_id, "Beckett reading")
    assert history.selected_session_id() == session_id
    assert history.title.text() == "Beckett reading"
    assert any(history.sessions.item(i).text().startswith("Beckett reading") for i in range(2))
    history.delete(session_id)
    assert history.sessions.count() == 1
    assert history.store().session(session_id) is None


def test_copy_a_turn_and_all(history):
    history.sessions.setCurrentRow(1)
    history.turns.setCurrentRow(1)
    history.copy_turns()
    assert QGuiApplication.clipboard().text() == "No matter."
    history.copy_all()
    assert QGuiApplication.clipboard().text() == "Ever tried. Ever failed. No matter."


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_exports_match_the_history(history, tmp_path, fmt):
    history.sessions.setCurrentRow(1)
    session_id = history.selected_session_id()
    path = history.export(session_id, tmp_path / f"out.{fmt}")
    written = path.read_text(encoding="utf-8")
    assert written == export(history.store().transcript(session_id), fmt)
    for phrase in ("Ever tried.", "No matter."):
        assert phrase in written
    if fmt == "srt":
        assert "00:00:05,000 --> 00:00:06,000" in written
    if fmt == "json":
        doc = json.loads(written)
        assert doc["text"] == "Ever tried. Ever failed. No matter." and doc["language"] == "en"


def test_export_to_a_missing_folder_is_a_clear_error(history, tmp_path):
    from desktop_rt.history.export import ExportFolderMissingError

    history.sessions.setCurrentRow(0)
    with pytest.raises(ExportFolderMissingError, match="does not exist"):
        history.export(history.selected_session_id(), tmp_path / "nope" / "out.txt")


def test_empty_history_says_so(tmp_path, qtbot):
    view = HistoryView(tmp_path / "empty.sqlite3")
    qtbot.addWidget(view)
    view.refresh()
    assert view.title.text() == "No saved sessions yet."
    assert not view.export_button.isEnabled()
    view.close_store()

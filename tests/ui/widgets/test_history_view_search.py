"""Searching the history goes to the matching turn and marks the match (real SQLite, real widgets)."""

from __future__ import annotations

from PySide6.QtGui import QTextDocument

from desktop_rt.history.store import TranscriptStore
from desktop_rt.ui.widgets.history_turns import SEARCH_MATCH_BACKGROUND
from desktop_rt.ui.widgets.history_view import HistoryView

MATCH_ROW = 150


def make_history(tmp_path):
    """One long session with "zebra" in one turn and "giraffe" in one translation only, and
    another session without either."""
    path = tmp_path / "history.sqlite3"
    with TranscriptStore(path) as store:
        store.begin_session("old", started_at="2026-03-01T09:00:00")
        store.save_turn("old", "o1", text="Nothing to see here.", start=0.0, end=1.0)
        store.begin_session("long", started_at="2026-03-02T10:00:00", language="fr")
        for n in range(200):
            text = f"Turn number {n} says very little of note."
            if n == MATCH_ROW:
                text = "Then a Zebra walked in and sat down."
            translation = "A giraffe was there." if n == 170 else ""
            store.save_turn(
                "long", f"i{n}", text=text, start=n * 3.0, end=n * 3.0 + 2.5,
                completed=True, translation=translation,
            )  # fmt: skip
    return path


def open_view(qtbot, path) -> HistoryView:
    view = HistoryView(path)
    qtbot.addWidget(view)
    view.resize(900, 500)
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        view.show()
    qtbot.waitUntil(lambda: view.turns.count() == 200)
    return view


def search(qtbot, view: HistoryView, text: str) -> None:
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        view.search.setText(text)


def marked(doc: QTextDocument, word: str) -> list[bool]:
    """For each occurrence of ``word`` in ``doc``: whether it has the search-match background."""
    result, found = [], doc.find(word)
    while not found.isNull():
        result.append(found.charFormat().background().color().name() == SEARCH_MATCH_BACKGROUND)
        found = doc.find(word, found)
    return result


def row_on_screen(view: HistoryView, row: int) -> bool:
    rect = view.turns.visualItemRect(view.turns.item(row))
    return view.turns.viewport().rect().contains(rect.center())


def test_a_search_selects_scrolls_to_and_marks_the_first_matching_turn(qtbot, tmp_path):
    view = open_view(qtbot, make_history(tmp_path))
    assert not row_on_screen(view, MATCH_ROW)
    search(qtbot, view, "zebra")
    assert view.sessions.count() == 1
    assert view.turns.currentRow() == MATCH_ROW
    assert view.turns.selectedItems() == [view.turns.item(MATCH_ROW)]
    qtbot.waitUntil(lambda: row_on_screen(view, MATCH_ROW), timeout=5_000)
    assert marked(view.turns.rendered(MATCH_ROW), "Zebra") == [True]
    assert marked(view.turns.rendered(0), "Turn") == [False]  # only matches are marked


def test_a_match_in_a_translation_goes_to_that_turn(qtbot, tmp_path):
    view = open_view(qtbot, make_history(tmp_path))
    search(qtbot, view, "GIRAFFE")
    assert view.turns.currentRow() == 170
    qtbot.waitUntil(lambda: row_on_screen(view, 170), timeout=5_000)
    assert marked(view.turns.rendered(170), "giraffe") == [True]


def test_clearing_the_search_removes_the_marks(qtbot, tmp_path):
    view = open_view(qtbot, make_history(tmp_path))
    search(qtbot, view, "zebra")
    assert marked(view.turns.rendered(MATCH_ROW), "Zebra") == [True]
    search(qtbot, view, "")
    assert view.sessions.count() == 2
    assert marked(view.turns.rendered(MATCH_ROW), "Zebra") == [False]


def test_mark_search_on_the_list_reports_no_match_and_keeps_the_selection(qtbot, tmp_path):
    view = open_view(qtbot, make_history(tmp_path))
    view.turns.setCurrentRow(3)
    assert view.turns.mark_search("no such words") is None
    assert view.turns.currentRow() == 3
    assert view.turns.mark_search("  zebra  ") == MATCH_ROW
    assert view.turns.mark_search("") is None and view.turns.query == ""

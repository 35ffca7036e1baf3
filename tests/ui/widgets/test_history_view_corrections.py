"""Correcting, reverting, translations and shading in the history view (real SQLite, real widgets)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCharFormat
from PySide6.QtWidgets import QLineEdit, QMenu

from desktop_rt.history.store import TranscriptStore
from desktop_rt.ui.widgets.caption_formats import Shading
from desktop_rt.ui.widgets.history_view import HistoryView

DOTTED = QTextCharFormat.UnderlineStyle.DotLine


def shown(view):
    return [view.turns.item(i).text() for i in range(view.turns.count())]


def make_history(tmp_path):
    path = tmp_path / "history.sqlite3"
    with TranscriptStore(path) as store:
        sid = store.begin_session("rec_1", started_at="2026-03-02T10:00:00", language="fr")
        store.save_turn(
            "rec_1", "i1", text="Le temps est beau.", start=0.0, end=2.0, completed=True,
            probabilities=[0.97, 0.32, 0.9, 0.95], translation="The weather is nice.",
        )  # fmt: skip
        store.save_turn("rec_1", "i2", text="À demain.", start=3.0, end=4.0, completed=True)
    return path, sid


def open_view(qtbot, path) -> HistoryView:
    view = HistoryView(path)
    qtbot.addWidget(view)
    view.resize(900, 500)
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        view.show()
    qtbot.waitUntil(lambda: view.turns.count() == 2)
    return view


def edit_row(qtbot, view: HistoryView, row: int, text: str) -> None:
    view.turns.setCurrentRow(row)
    view.turns.setFocus()
    qtbot.keyClick(view.turns, Qt.Key.Key_F2)
    editor = view.turns.viewport().findChild(QLineEdit)
    assert editor is not None and editor.text() == view.turns.turn(row).text
    editor.setText(text)
    qtbot.keyClick(editor, Qt.Key.Key_Return)


def test_a_turn_is_corrected_in_place_saved_at_once_searched_and_exported(qtbot, tmp_path):
    path, sid = make_history(tmp_path)
    view = open_view(qtbot, path)
    assert shown(view)[0] == "[00:00]  Le temps est beau.\nThe weather is nice."
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        edit_row(qtbot, view, 1, "À demain matin.")
    qtbot.waitUntil(lambda: shown(view)[1] == "[00:03]  À demain matin.")
    with TranscriptStore(path) as store:  # saved now, not at exit
        turn = store.turns(sid)[1]
    assert (turn.text, turn.original_text) == ("À demain matin.", "À demain.")
    assert "Recognised as: À demain." in view.turns.item(1).toolTip()
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        view.search.setText("matin")
    assert view.sessions.count() == 1
    target = tmp_path / "out.srt"
    with qtbot.waitSignal(view.exported, timeout=10_000):
        view.export(sid, target)
    srt = target.read_text(encoding="utf-8")
    assert "À demain matin." in srt and "Le temps est beau.\nThe weather is nice.\n" in srt


def test_revert_from_the_context_menu_brings_the_recognised_text_back(qtbot, tmp_path):
    path, sid = make_history(tmp_path)
    with TranscriptStore(path) as store:
        store.correct_turn(store.turn_id("rec_1", "i2"), "Until tomorrow.")
    view = open_view(qtbot, path)
    assert shown(view)[1] == "[00:03]  Until tomorrow."
    rect = view.turns.visualItemRect(view.turns.item(1))
    view.turns.customContextMenuRequested.emit(rect.center())
    menu = view.turns.findChild(QMenu)
    correct, revert = menu.actions()
    assert revert.isEnabled()
    with qtbot.waitSignal(view.loaded, timeout=10_000):
        revert.trigger()
    qtbot.waitUntil(lambda: shown(view)[1] == "[00:03]  À demain.")
    with TranscriptStore(path) as store:
        assert not store.turns(sid)[1].corrected


def test_an_empty_correction_is_refused_with_a_message_and_loses_nothing(qtbot, tmp_path):
    path, sid = make_history(tmp_path)
    view = open_view(qtbot, path)
    with qtbot.waitSignal(view.failed, timeout=10_000) as failed:
        edit_row(qtbot, view, 1, "   ")
    assert "cannot be empty" in failed.args[0]
    with TranscriptStore(path) as store:
        assert store.turns(sid)[1].text == "À demain." and not store.turns(sid)[1].corrected


def test_uncertain_words_are_shaded_and_the_setting_turns_it_off(qtbot, tmp_path):
    path, _sid = make_history(tmp_path)
    view = open_view(qtbot, path)

    def formats_of(word: str) -> list[QTextCharFormat]:
        found = []
        doc = view.turns.rendered(0)  # kept while its blocks are read
        it = doc.begin().begin()
        while not it.atEnd():
            if word in it.fragment().text().split():
                found.append(it.fragment().charFormat())
            it += 1
        return found

    assert [f.underlineStyle() for f in formats_of("temps")] == [DOTTED]
    assert all(f.underlineStyle() != DOTTED for f in formats_of("beau."))
    view.set_shading(Shading(enabled=False))
    assert all(f.underlineStyle() != DOTTED for f in formats_of("temps"))

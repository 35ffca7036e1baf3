"""Correcting a final caption line in place, by mouse and keyboard (real widgets, pytest-qt)."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QMenu

from desktop_rt.live.transcript_recorder import CaptionTurn
from desktop_rt.ui.shortcuts import help_text
from desktop_rt.ui.widgets.caption_view import CaptionView


def make_view(qtbot) -> CaptionView:
    view = CaptionView(font_size=16)
    qtbot.addWidget(view)
    view.resize(500, 300)
    view.show()
    qtbot.waitExposed(view)
    view.show_turn(CaptionTurn("a", 0, "The whether is fine.", "", True, session_uid="rec_1"))
    view.show_turn(CaptionTurn("b", 1, "Still speaking", " and more"))  # not final
    return view


def test_double_click_opens_an_editor_and_enter_saves_the_correction(qtbot):
    view = make_view(qtbot)
    rect = view.corrector._line_rect("a")
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    editor = view.corrector.editor
    assert editor is not None and editor.text() == "The whether is fine."
    editor.setText("The weather is fine.")
    with qtbot.waitSignal(view.corrected) as got:
        qtbot.keyClick(editor, Qt.Key.Key_Return)
    turn, text = got.args
    assert (turn.item_id, turn.session_uid, text) == ("a", "rec_1", "The weather is fine.")
    assert view.shown_committed("a") == "The weather is fine."
    assert view.committed_text() == "The weather is fine. Still speaking"
    assert editor.closed
    # a later update of the turn (its English line, say) keeps the correction on screen
    view.show_turn(CaptionTurn("a", 0, "The whether is fine.", "", True, translation="Fine."))
    assert view.document().findBlockByNumber(0).text().startswith("The weather is fine.")
    view.restyle()  # a theme change draws it again, corrected
    assert view.document().findBlockByNumber(0).text().startswith("The weather is fine.")


def test_f2_corrects_the_latest_final_line_and_escape_cancels(qtbot):
    assert "F2" in help_text()
    view = make_view(qtbot)
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_F2)
    editor = view.corrector.editor
    assert editor is not None and editor.text() == "The whether is fine."
    editor.setText("Something else")
    qtbot.keyClick(editor, Qt.Key.Key_Escape)
    assert editor.closed and view.shown_committed("a") == "The whether is fine."


def test_tentative_lines_blank_and_unchanged_corrections_are_refused(qtbot):
    view = make_view(qtbot)
    assert not view.corrector.edit("b")  # still being spoken
    rect = view.corrector._line_rect("b")
    qtbot.mouseDClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert view.corrector.editor is None
    with qtbot.assertNotEmitted(view.corrected):
        assert not view.apply_correction("a", "   ")
        assert not view.apply_correction("a", "The whether is fine.")
        assert not view.apply_correction("b", "Edited tentative")
        assert not view.apply_correction("missing", "Nothing")
    assert view.corrector.item_at(QPoint(5, 5)) == "a"


def test_a_correction_back_to_the_recognised_text_reverts_it(qtbot):
    view = make_view(qtbot)
    assert view.apply_correction("a", "The weather is fine.")
    with qtbot.waitSignal(view.corrected):
        assert view.apply_correction("a", "The whether is fine.")
    assert view.shown_committed("a") == "The whether is fine."


def test_the_context_menu_corrects_and_reverts_a_line(qtbot):
    view = make_view(qtbot)
    assert view.apply_correction("a", "The weather is fine.")
    rect = view.corrector._line_rect("a")
    pos = rect.center()
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, view.viewport().mapToGlobal(pos))
    QApplication.sendEvent(view.viewport(), event)
    menu = next(m for m in view.findChildren(QMenu) if m.isVisible())
    actions = {a.text().split("\t")[0]: a for a in menu.actions()}
    assert actions["Correct this line…"].isEnabled()
    revert = actions["Revert to the recognised text"]
    assert revert.isEnabled()
    with qtbot.waitSignal(view.corrected) as got:
        revert.trigger()
    assert got.args[1] == "The whether is fine."
    assert view.shown_committed("a") == "The whether is fine."
    menu.close()

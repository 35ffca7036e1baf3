"""The caption view's English line (live translation), on real Qt widgets offscreen."""

from __future__ import annotations

from PySide6.QtGui import QTextCursor

from desktop_rt.live.transcript_recorder import CaptionTurn
from desktop_rt.ui.widgets.caption_view import CaptionView


def runs(view: CaptionView, block: int) -> list[tuple[str, str, bool, float]]:
    """(text, colour, italic, point size) of each run of a paragraph."""
    found = []
    it = view.document().findBlockByNumber(block).begin()
    while not it.atEnd():
        fmt = it.fragment().charFormat()
        found.append(
            (it.fragment().text(), fmt.foreground().color().name(), fmt.fontItalic(),
             fmt.fontPointSize())
        )  # fmt: skip
        it += 1
    return found


def test_the_english_line_sits_beneath_the_original_smaller_and_muted(qtbot):
    view = CaptionView(font_size=20)
    qtbot.addWidget(view)
    view.show_turn(CaptionTurn("a", 0, "Bonjour", " à tous", translation_tentative=" Hello"))
    assert view.translation_text("a") == "Hello"
    view.show_turn(CaptionTurn("a", 0, "Bonjour à tous.", "", True, translation="Hello everyone."))
    assert view.translation_text("a") == "Hello everyone."
    original, english = runs(view, 0)
    assert original[0] == "Bonjour à tous." and english[0] == "\u2028Hello everyone."
    assert english[1] != original[1] and english[3] < 20 and not english[2]
    assert view.committed_text() == "Bonjour à tous."  # the original only
    assert view.document().blockCount() == 1  # one turn, one paragraph


def test_tentative_english_is_dimmed_and_turns_without_translation_have_no_line(qtbot):
    view = CaptionView(font_size=20)
    qtbot.addWidget(view)
    view.show_turn(
        CaptionTurn("a", 0, "Hallo", "", translation="Hello", translation_tentative=" th")
    )
    *_, final, tentative = runs(view, 0)
    assert final[0] == "\u2028Hello" and not final[2]
    assert tentative[0] == " th" and tentative[2]  # italic like the tentative original words
    view.show_turn(CaptionTurn("b", 1, "Plain", " words"))
    assert view.translation_text("b") == "" and view.translation_text("missing") == ""
    cursor = QTextCursor(view.document().findBlockByNumber(1))
    cursor.select(QTextCursor.SelectionType.BlockUnderCursor)
    assert "\u2028" not in cursor.selectedText()


def test_the_english_line_survives_restyle_and_tentative_limits(qtbot):
    view = CaptionView(font_size=18)
    qtbot.addWidget(view)
    view.resize(300, 400)
    long_tail = " and more" * 40
    view.show_turn(CaptionTurn("a", 0, "Un", long_tail, translation="One"))
    assert view.translation_text("a") == "One"  # the tentative tail was cut, not the line
    view.restyle()
    assert view.translation_text("a") == "One"

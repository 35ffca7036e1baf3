"""Uncertain words are shaded in the live captions, readable in every theme, and can be turned off."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QPalette, QTextCharFormat
from PySide6.QtWidgets import QApplication

from desktop_rt.live.transcript_recorder import CaptionTurn
from desktop_rt.ui.theme import contrast_ratio, palette_for
from desktop_rt.ui.widgets.caption_formats import Shading
from desktop_rt.ui.widgets.caption_view import CaptionView


def word_runs(view: CaptionView, block: int = 0) -> dict[str, QTextCharFormat]:
    """Each word of a paragraph and its format."""
    found = {}
    it = view.document().findBlockByNumber(block).begin()
    while not it.atEnd():
        for word in it.fragment().text().split():
            found[word] = it.fragment().charFormat()
        it += 1
    return found


DOTTED = QTextCharFormat.UnderlineStyle.DotLine


def turn() -> CaptionTurn:
    return CaptionTurn("a", 0, "The quorum met", " later", True, probabilities=(0.95, 0.31, 0.88))


@pytest.mark.parametrize("theme", ["light", "dark", "high_contrast"])
def test_uncertain_words_are_lighter_dotted_and_readable_in_every_theme(qtbot, theme):
    view = CaptionView(font_size=20)
    qtbot.addWidget(view)
    view.setPalette(palette_for(theme) or QPalette())
    view.show_turn(turn())
    runs = word_runs(view)
    sure, unsure = runs["The"], runs["quorum"]
    assert unsure.underlineStyle() == QTextCharFormat.UnderlineStyle.DotLine
    assert sure.underlineStyle() == QTextCharFormat.UnderlineStyle.NoUnderline
    assert not unsure.fontItalic()  # apart from tentative words, which are italic
    base = view.palette().color(QPalette.ColorRole.Base)
    text = view.palette().color(QPalette.ColorRole.Text)
    shade = unsure.foreground().color()
    assert shade != sure.foreground().color()
    assert contrast_ratio(shade, base) >= 4.5, (theme, shade.name())
    assert contrast_ratio(shade, base) < contrast_ratio(text, base)  # lighter than the text
    assert runs["later"].fontItalic()  # tentative words keep their own look


def test_the_setting_turns_shading_off_and_on_and_unknown_words_are_never_shaded(qtbot):
    view = CaptionView(font_size=20)
    qtbot.addWidget(view)
    view.show_turn(turn())
    view.set_shading(Shading(enabled=False))
    assert all(f.underlineStyle() != DOTTED for f in word_runs(view).values())
    view.set_shading(Shading(enabled=True, threshold=0.9))
    runs = word_runs(view)
    assert runs["met"].underlineStyle() == DOTTED  # 0.88 < 0.9
    view.show_turn(CaptionTurn("b", 1, "No numbers here", probabilities=(None, None, None)))
    assert all(f.underlineStyle() != DOTTED for f in word_runs(view, 1).values())


def test_shading_follows_a_theme_change(qtbot):
    view = CaptionView(font_size=20)
    qtbot.addWidget(view)
    app = QApplication.instance()
    old = app.palette()
    try:
        app.setPalette(palette_for("high_contrast"))
        base = QPalette.ColorRole.Base
        qtbot.waitUntil(lambda: view.palette().color(base).name() == "#000000")
        view.restyle()
        view.show_turn(turn())
        shade = word_runs(view)["quorum"].foreground().color()
        assert contrast_ratio(shade, QColor("#000000")) >= 4.5 and shade.name() != "#ffff00"
    finally:
        app.setPalette(old)

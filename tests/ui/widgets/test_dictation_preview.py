"""The dictation preview: on top, never focused, the last words of what is coming."""

from __future__ import annotations

from PySide6.QtCore import Qt

from desktop_rt.ui.widgets.dictation_preview import LISTENING, DictationPreview


def test_the_preview_never_takes_focus_and_shows_the_words(qtbot):
    preview = DictationPreview()
    qtbot.addWidget(preview)
    flags = preview.windowFlags()
    assert flags & Qt.WindowType.WindowDoesNotAcceptFocus
    assert flags & Qt.WindowType.WindowStaysOnTopHint
    assert preview.testAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
    preview.show_text("")
    assert preview.isVisible() and preview.label.text() == LISTENING
    preview.show_text("a few tentative words")
    assert preview.label.text() == "a few tentative words"
    preview.show_text("word " * 100)
    assert preview.label.text().startswith("…") and len(preview.label.text()) <= 121
    preview.hide()
    assert not preview.isVisible()

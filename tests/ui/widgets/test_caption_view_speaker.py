"""The caption view's speaker labels (meeting mode), on real Qt widgets offscreen."""

from __future__ import annotations

from PySide6.QtGui import QFont

from desktop_rt.live.transcript_recorder import CaptionTurn
from desktop_rt.ui.widgets.caption_view import CaptionView


def test_a_labelled_turn_starts_with_its_speaker_in_bold(qtbot):
    view = CaptionView(font_size=20)
    qtbot.addWidget(view)
    view.show_turn(CaptionTurn("a", 0, " Hello there", " friend", speaker="You"))
    view.show_turn(CaptionTurn("b", 0, " Hi", speaker="Others"))
    view.show_turn(CaptionTurn("a", 0, " Hello there friend.", final=True, speaker="You"))
    doc = view.document()
    assert doc.findBlockByNumber(0).text() == "You: Hello there friend."
    assert doc.findBlockByNumber(1).text() == "Others: Hi"
    label = doc.findBlockByNumber(0).begin().fragment()
    assert label.text() == "You: " and label.charFormat().fontWeight() == QFont.Weight.Bold
    assert view.committed_text() == "Hello there friend. Hi"  # the words, without labels


def test_an_unlabelled_turn_has_no_prefix(qtbot):
    view = CaptionView(font_size=20)
    qtbot.addWidget(view)
    view.show_turn(CaptionTurn("a", 0, " Hello"))
    assert view.document().findBlockByNumber(0).text() == "Hello"

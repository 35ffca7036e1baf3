"""A turn's completed transcript replaces its live line (a turn decoded whole once it ended,
docs/design/streaming.md), on real Qt widgets offscreen."""

from __future__ import annotations

from desktop_rt.live.transcript_recorder import CaptionTurn
from desktop_rt.ui.widgets.caption_view import CaptionView

STREAMED = (
    "He was not an ill disposed young man unless to be rather cold hearted and rather selfish "
    "is to be ill disposed"
)
WHOLE = (
    "He was not an ill-disposed young man, unless to be rather cold-hearted and rather "
    "selfish is to be ill-disposed."
)


def _lines(view: CaptionView, number: int) -> int:
    block = view.document().findBlockByNumber(number)
    view.document().documentLayout().blockBoundingRect(block)
    return block.layout().lineCount()


def test_the_completed_text_replaces_the_live_line_in_place_within_a_line(qtbot):
    view = CaptionView(font_size=18)
    qtbot.addWidget(view)
    view.resize(420, 300)
    view.show()
    qtbot.waitExposed(view)
    view.show_turn(CaptionTurn("a", 0, "Earlier turn.", final=True))
    view.show_turn(CaptionTurn("b", 1, STREAMED[:40], STREAMED[40:]))
    view.show_turn(CaptionTurn("b", 1, STREAMED, ""))  # the flush's last words
    before = _lines(view, 1)
    assert before >= 3
    view.show_turn(CaptionTurn("b", 1, WHOLE, "", final=True))
    assert view.shown_committed("b") == WHOLE and view.committed_text().endswith(WHOLE)
    assert view.document().blockCount() == 2  # the same paragraph, not a new one
    assert abs(_lines(view, 1) - before) <= 1
    bar = view.verticalScrollBar()
    assert view.following and bar.value() == bar.maximum()  # still at the latest words
    assert view.editable("b")  # a final line can be corrected

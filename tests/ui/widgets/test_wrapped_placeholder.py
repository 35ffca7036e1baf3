"""The caption area's placeholder is shown whole, on as many lines as it needs.

Found by using the app: while the model loaded, the captions said "Loading the speech model…
Captions appear here once it is" and the last word was cut (Qt draws a text edit's placeholder
on one line). Real widgets, rendered offscreen; the test looks at the pixels.
"""

from __future__ import annotations

from PySide6.QtGui import QImage

from desktop_rt.ui.widgets.caption_view import CaptionView
from desktop_rt.ui.widgets.wrapped_placeholder import WrappedPlaceholder

LONG = "Loading the speech model… Captions appear here once it is ready."


def _inked_rows(image: QImage) -> list[int]:
    """The rows holding a pixel unlike the background (an empty document draws only its
    placeholder)."""
    background = image.pixelColor(0, 0)
    return [
        y
        for y in range(image.height())
        if any(image.pixelColor(x, y) != background for x in range(image.width()))
    ]


def _view(qtbot, width: int) -> CaptionView:
    view = CaptionView(font_size=20)
    qtbot.addWidget(view)
    WrappedPlaceholder(view)
    view.resize(width, 300)
    view.setPlaceholderText(LONG)
    view.show()
    qtbot.waitExposed(view)
    return view


def test_a_long_placeholder_wraps_onto_a_second_line(qtbot):
    view = _view(qtbot, 600)
    rows = _inked_rows(view.viewport().grab().toImage())
    line = view.fontMetrics().lineSpacing()
    assert view.placeholderText() == LONG  # what screen readers and tests read is unchanged
    assert rows, "no placeholder drawn"
    assert rows[-1] - rows[0] > line, (rows[0], rows[-1], line)  # more than one line of text

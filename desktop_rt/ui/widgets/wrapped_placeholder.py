"""A text edit's placeholder drawn on as many lines as it needs.

Qt (6.11) draws a ``QTextEdit``'s placeholder on one line and cuts the rest, so the caption
area said "Loading the speech model… Captions appear here once it is". :class:`WrappedPlaceholder`
watches the edit's viewport and, while the document is empty, draws the edit's own
``placeholderText()`` (still what tests and screen readers read) word-wrapped in the palette's
placeholder colour, in place of Qt's one line. Attach it once: ``WrappedPlaceholder(edit)``.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QTextEdit

__all__ = ["WrappedPlaceholder"]


class WrappedPlaceholder(QObject):
    """Owned by ``edit``; paints its placeholder wrapped whenever Qt would paint it cut."""

    def __init__(self, edit: QTextEdit):
        super().__init__(edit)
        self._edit = edit
        edit.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt naming
        if event.type() != QEvent.Type.Paint:  # first: other events come while edit is deleted
            return False
        edit = self._edit
        text = edit.placeholderText()
        if not text or not edit.document().isEmpty():
            return False
        viewport = edit.viewport()
        margin = int(edit.document().documentMargin())
        painter = QPainter(viewport)
        painter.setFont(edit.font())
        painter.setPen(edit.palette().placeholderText().color())
        flags = Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft | Qt.TextFlag.TextWordWrap
        painter.drawText(viewport.rect().adjusted(margin, margin, -margin, -margin), flags, text)
        painter.end()
        return True  # an empty document has nothing else to draw; Qt's cut line would overlap

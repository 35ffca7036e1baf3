"""A small on-top window near the mouse pointer showing the words not yet typed while dictating.

:class:`DictationPreview` never takes focus (the words are typed into the application that has
it): a frameless tool-tip window shown without activation. :meth:`~DictationPreview.show_text`
shows ``text`` near the pointer (or a "Listening…" hint when it is empty);
:meth:`~DictationPreview.hide` hides it.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QCursor, QGuiApplication
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

__all__ = ["DictationPreview", "LISTENING"]

LISTENING = "Listening…"
_OFFSET = QPoint(16, 24)
_MAX_CHARS = 120


class DictationPreview(QWidget):
    """See the module docstring."""

    def __init__(self) -> None:
        super().__init__(
            None,
            Qt.WindowType.ToolTip
            | Qt.WindowType.FramelessWindowHint
            | Qt.WindowType.WindowStaysOnTopHint
            | Qt.WindowType.WindowDoesNotAcceptFocus,
        )
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setAccessibleName("Dictation preview")
        self.label = QLabel(LISTENING)
        self.label.setWordWrap(True)
        self.label.setMaximumWidth(480)
        self.label.setStyleSheet("color: #bbb; font-style: italic;")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(self.label)

    def show_text(self, text: str) -> None:
        """Show ``text`` (its last words when long) near the pointer; never activates."""
        text = text.strip()
        if len(text) > _MAX_CHARS:
            text = "…" + text[-_MAX_CHARS:]
        self.label.setText(text or LISTENING)
        self.adjustSize()
        if not self.isVisible():
            self.move(self._near_pointer())
            self.show()

    def _near_pointer(self) -> QPoint:
        point = QCursor.pos() + _OFFSET
        screen = QGuiApplication.screenAt(QCursor.pos()) or QGuiApplication.primaryScreen()
        if screen is None:
            return point
        area = screen.availableGeometry()
        x = min(max(point.x(), area.left()), area.right() - self.width())
        y = min(max(point.y(), area.top()), area.bottom() - self.height())
        return QPoint(x, y)

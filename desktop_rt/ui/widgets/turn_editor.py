"""An inline editor for correcting one caption line: Enter saves, Escape or leaving it cancels.

:class:`TurnEditor` is a one-line field laid over the line it corrects. It is parented to the
top-level window (not to the captions), so the Space key types a space in it rather than
meaning "talk". :attr:`TurnEditor.accepted` carries the text once, on Enter; the editor then
closes itself, as it does on Escape (both emit :attr:`TurnEditor.finished`, so the caller can
take the focus back) or when the user moves the focus elsewhere (a click, Tab).
"""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt, Signal
from PySide6.QtGui import QFocusEvent, QKeyEvent
from PySide6.QtWidgets import QLineEdit, QWidget

__all__ = ["TurnEditor"]

_MOVED_AWAY = (
    Qt.FocusReason.MouseFocusReason,
    Qt.FocusReason.TabFocusReason,
    Qt.FocusReason.BacktabFocusReason,
    Qt.FocusReason.ShortcutFocusReason,
)


class TurnEditor(QLineEdit):
    """See the module docstring. ``over``: the widget whose ``rect`` (its coordinates) it covers."""

    accepted = Signal(str)
    finished = Signal()  # closed by Enter or Escape: the focus may go back to the captions

    def __init__(self, over: QWidget, rect: QRect, text: str):
        host = over.window()
        super().__init__(text, host)
        self._closed = False
        self.setAccessibleName("Correct this line")
        self.setAccessibleDescription(
            "Enter saves the correction; Escape keeps the line as it was."
        )
        self.setToolTip("Enter saves the correction; Escape cancels.")
        top_left = over.mapTo(host, rect.topLeft())
        self.setGeometry(QRect(top_left, rect.size()).adjusted(0, 0, 0, 6))
        self.selectAll()
        self.returnPressed.connect(self._accept)
        self.show()
        self.raise_()
        self.setFocus(Qt.FocusReason.OtherFocusReason)

    @property
    def closed(self) -> bool:
        return self._closed

    def cancel(self) -> None:
        self._close()

    def _accept(self) -> None:
        if self._closed:
            return
        text = self.text()
        self._close()
        self.accepted.emit(text)
        self.finished.emit()

    def _close(self) -> None:
        if not self._closed:
            self._closed = True
            self.hide()
            self.deleteLater()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - Qt naming
        if event.key() == Qt.Key.Key_Escape:
            self._close()
            self.finished.emit()
            return
        super().keyPressEvent(event)

    def focusOutEvent(self, event: QFocusEvent) -> None:  # noqa: N802 - Qt naming
        super().focusOutEvent(event)
        if event.reason() in _MOVED_AWAY:  # not when the window merely lost activation
            self._close()

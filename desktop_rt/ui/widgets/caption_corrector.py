"""The gestures that correct a caption line, and its inline editor.

:class:`CaptionCorrector` watches a :class:`~desktop_rt.ui.widgets.caption_view.CaptionView`:
a double-click on a final line, F2 (the line holding the keyboard cursor, else the latest final
line) or "Correct this line…" in the context menu opens a
:class:`~desktop_rt.ui.widgets.turn_editor.TurnEditor` over the line; Enter hands the text to
:meth:`CaptionView.apply_correction`. Lines still being spoken (tentative) never open one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QPoint, QRect, Qt
from PySide6.QtGui import QContextMenuEvent, QKeyEvent, QMouseEvent, QTextCursor

from desktop_rt.live.transcript_recorder import CaptionTurn
from desktop_rt.ui.widgets.turn_editor import TurnEditor

if TYPE_CHECKING:
    from desktop_rt.ui.widgets.caption_view import CaptionView

__all__ = ["CaptionCorrector", "EDIT_KEY"]

EDIT_KEY = Qt.Key.Key_F2
"""Corrects the line holding the keyboard cursor (the latest final line when it holds none)."""


class CaptionCorrector(QObject):
    """See the module docstring. ``editor``: the correction open now (None when none is)."""

    def __init__(self, view: CaptionView):
        super().__init__(view)
        self._view = view
        self.editor: TurnEditor | None = None
        self._viewport = view.viewport()
        view.installEventFilter(self)
        self._viewport.installEventFilter(self)

    def item_at(self, pos: QPoint) -> str | None:
        """The turn drawn at ``pos`` (viewport coordinates), if any."""
        return self._view.item_of_block(self._view.cursorForPosition(pos).blockNumber())

    def keyboard_target(self) -> str | None:
        """The line F2 corrects: the one holding the keyboard cursor, else the latest final one."""
        view = self._view
        here = view.item_of_block(view.textCursor().blockNumber())
        if view.editable(here):
            return here
        turns = reversed(view.turns())
        return next((t.item_id for t in turns if view.editable(t.item_id)), None)

    def edit(self, item_id: str | None) -> bool:
        """Open the correction of ``item_id``; False when that line cannot be corrected."""
        view = self._view
        if item_id is None or not view.editable(item_id):
            return False
        if self.editor is not None and not self.editor.closed:
            self.editor.cancel()
        cursor = QTextCursor(view.document().findBlockByNumber(view.block_number(item_id)))
        view.setTextCursor(cursor)  # F2 and the menu then act on this line
        view.ensureCursorVisible()
        editor = TurnEditor(
            view.viewport(), self._line_rect(item_id), view.shown_committed(item_id)
        )
        editor.setFont(view.font())
        editor.accepted.connect(lambda text: view.apply_correction(item_id, text))
        editor.finished.connect(view.setFocus)
        self.editor = editor
        return True

    def revert(self, item_id: str | None) -> bool:
        """Show the recognised text of a corrected line again (saved like a correction)."""
        turn = self._turn(item_id)
        return turn is not None and self._view.apply_correction(turn.item_id, turn.committed)

    def _turn(self, item_id: str | None) -> CaptionTurn | None:
        return next((t for t in self._view.turns() if t.item_id == item_id), None)

    def _line_rect(self, item_id: str) -> QRect:
        view = self._view
        block = view.document().findBlockByNumber(view.block_number(item_id))
        rect = view.document().documentLayout().blockBoundingRect(block).toRect()
        top = rect.top() - view.verticalScrollBar().value()
        width = max(120, view.viewport().width() - 2 * rect.left())
        height = max(
            view.fontMetrics().height() + 8, min(rect.height(), 3 * view.fontMetrics().height())
        )
        return QRect(rect.left(), max(0, top), width, height)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt naming
        kind = event.type()  # only these three kinds reach the view below (cheap for the rest)
        if kind == QEvent.Type.KeyPress and watched is self._view:
            if isinstance(event, QKeyEvent) and event.key() == EDIT_KEY:
                return self.edit(self.keyboard_target())
        elif kind == QEvent.Type.MouseButtonDblClick and watched is self._viewport:
            if isinstance(event, QMouseEvent):
                return self.edit(self.item_at(event.position().toPoint()))
        elif kind == QEvent.Type.ContextMenu and isinstance(event, QContextMenuEvent):
            return watched is self._viewport and self._context_menu(event)
        return False

    def _context_menu(self, event: QContextMenuEvent) -> bool:
        view = self._view
        item = self.item_at(event.pos())
        if event.reason() == QContextMenuEvent.Reason.Keyboard:
            item = self.keyboard_target()
        menu = view.createStandardContextMenu(event.pos())
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        action = menu.addAction("Correct this line…\tF2", lambda: self.edit(item))
        action.setEnabled(view.editable(item))
        revert = menu.addAction("Revert to the recognised text", lambda: self.revert(item))
        turn = self._turn(item)
        revert.setEnabled(
            turn is not None and turn.committed.strip() != view.shown_committed(turn.item_id)
        )
        menu.popup(event.globalPos())
        return True

"""The history's turn list: each turn's time, speaker, words and English line; corrections in place.

:class:`TurnList` shows :class:`~desktop_rt.history.store.TurnRow` s. Its delegate draws each turn
as rich text: the words the recognizer was unsure of shaded as in the live captions
(:mod:`~desktop_rt.ui.widgets.caption_formats`), a corrected turn marked "✎" (its tooltip holds
what was recognised), the translation as a smaller second line. A double-click, F2 or "Correct…"
in the context menu edits a turn's text in place; Enter emits :attr:`TurnList.correction_requested`
(the turn, the text) and "Revert to the recognised text" :attr:`TurnList.revert_requested`: the
history view saves them. The list itself never writes.
"""

from __future__ import annotations

import math

from PySide6.QtCore import (
    QAbstractItemModel,
    QModelIndex,
    QPersistentModelIndex,
    QPoint,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QColor,
    QFont,
    QPainter,
    QPalette,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QLineEdit,
    QListView,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QWidget,
)

from desktop_rt.history.speech_text import clean_speech_text
from desktop_rt.history.store import TurnRow
from desktop_rt.ui.widgets import caption_formats as formats
from desktop_rt.ui.widgets.caption_formats import Shading
from desktop_rt.ui.widgets.history_text import clock

__all__ = ["TurnList", "TURN_ROLE", "SEARCH_MATCH_BACKGROUND"]

TURN_ROLE = Qt.ItemDataRole.UserRole + 1
"""Item data holding the item's :class:`TurnRow` (``UserRole`` holds its text, for copying)."""

SEARCH_MATCH_BACKGROUND = "#ffd54f"
"""Background of a search match in the turns (amber, black text: readable in every theme)."""

_Index = QModelIndex | QPersistentModelIndex
_SIZES_KEPT = 20_000  # laid-out turn sizes remembered (a few widths of a long session)
_BATCH = 40  # turns laid out per turn of the event loop


def _plain_height(turn: TurnRow, text: str, font: QFont, width: int) -> int:
    """The height of the turn's rich text: the same words and fonts, no colours (formats that
    change no metrics), which lays out several times faster."""
    doc = QTextDocument()
    doc.setDefaultFont(font)
    doc.setDocumentMargin(4)
    doc.setTextWidth(max(60, width))
    cursor = QTextCursor(doc)
    who = f"{turn.speaker}: " if turn.speaker else ""
    bold = QTextCharFormat()
    bold.setFontWeight(QFont.Weight.Bold)
    cursor.insertText(f"[{clock(turn.start)}]  ")
    cursor.insertText(who, bold)
    cursor.insertText(text + ("  ✎" if turn.corrected else ""), QTextCharFormat())
    if turn.translation:
        small = QTextCharFormat()
        small.setFontPointSize(max(6.0, font.pointSizeF() * formats.TRANSLATION_SCALE))
        cursor.insertText("\u2028" + turn.translation, small)
    return math.ceil(doc.size().height())


class TurnList(QListWidget):
    """See the module docstring."""

    correction_requested = Signal(object, str)  # TurnRow, the text the user wrote
    revert_requested = Signal(object)  # TurnRow

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.shading = Shading()
        self.query = ""  # the search text marked in the turns ("" for none)
        self._scroll_to: int | None = None  # a row to show once the batched layout reaches it
        self.setWordWrap(True)
        self.setSpacing(3)
        self.setAlternatingRowColors(True)
        self.setSelectionMode(QListWidget.SelectionMode.ExtendedSelection)
        self.setResizeMode(QListView.ResizeMode.Adjust)  # rows re-wrap when the width changes
        self.setLayoutMode(QListView.LayoutMode.Batched)  # a long session never stalls the UI
        self.setBatchSize(_BATCH)
        self._delegate = _TurnDelegate(self)
        self.setItemDelegate(self._delegate)
        self.setEditTriggers(
            QAbstractItemView.EditTrigger.DoubleClicked
            | QAbstractItemView.EditTrigger.EditKeyPressed
        )
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(self._menu)

    def set_shading(self, shading: Shading) -> None:
        if shading != self.shading:
            self.shading = shading
            self.doItemsLayout()
            self.viewport().update()

    def mark_search(self, query: str) -> int | None:
        """Mark ``query`` (case-insensitive) in every turn; select and scroll to the first turn
        whose text or translation holds it. Returns its row (None: no turn holds it)."""
        self.query = " ".join(query.split())
        self.viewport().update()
        needle = self.query.casefold()
        for row in range(self.count()) if needle else ():
            turn = self.turn(row)
            text = f"{self.item(row).data(Qt.ItemDataRole.UserRole)}\n{turn.translation if turn else ''}"
            if needle in text.casefold():
                self.setCurrentRow(row)
                self._scroll_to = row
                self._scroll_when_laid_out()
                return row
        return None

    def updateGeometries(self) -> None:  # noqa: N802 - Qt naming
        """Called as each batch of turns is laid out: scroll to a found turn once it is."""
        super().updateGeometries()
        self._scroll_when_laid_out()

    def _scroll_when_laid_out(self) -> None:
        item = None if self._scroll_to is None else self.item(self._scroll_to)
        if item is not None and self.visualItemRect(item).isValid():
            self._scroll_to = None
            self.scrollToItem(item, QAbstractItemView.ScrollHint.PositionAtCenter)

    def show_turns(self, turns: list[TurnRow]) -> None:
        """Show ``turns`` (those without words are left out)."""
        self.clear()
        self._scroll_to = None
        self._delegate.forget()
        editable = QListWidgetItem().flags() | Qt.ItemFlag.ItemIsEditable
        for turn in turns:
            text = clean_speech_text(turn.text).strip()
            if not text:
                continue
            who = f"{turn.speaker}: " if turn.speaker else ""  # meeting mode
            label = f"[{clock(turn.start)}]  {who}{text}"
            if turn.translation:
                label += "\n" + turn.translation
            item = QListWidgetItem(label)
            item.setData(Qt.ItemDataRole.UserRole, text)
            item.setData(TURN_ROLE, turn)
            item.setFlags(editable)
            if turn.corrected:
                item.setToolTip(f"Corrected. Recognised as: {turn.original_text}")
                item.setData(Qt.ItemDataRole.AccessibleDescriptionRole, "Corrected")
            self.addItem(item)

    def turn(self, row: int) -> TurnRow | None:
        item = self.item(row)
        turn = None if item is None else item.data(TURN_ROLE)
        return turn if isinstance(turn, TurnRow) else None

    def rendered(self, row: int) -> QTextDocument:
        """The rich text drawn for ``row`` (unselected), as the delegate lays it out."""
        option = QStyleOptionViewItem()
        option.initFrom(self)
        index = self.model().index(row, 0)
        return self._delegate.document(option, index, self.viewport().width())

    def _menu(self, pos: QPoint) -> None:
        item = self.itemAt(pos) or self.currentItem()  # the Menu key: the current turn
        if item is None:
            return
        turn: TurnRow = item.data(TURN_ROLE)
        menu = QMenu(self)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.addAction("Correct…\tF2", lambda: self.editItem(item))
        revert = menu.addAction(
            "Revert to the recognised text", lambda: self.revert_requested.emit(turn)
        )
        revert.setEnabled(turn.corrected)
        menu.popup(self.viewport().mapToGlobal(pos))


def _mark(doc: QTextDocument, query: str) -> None:
    """Give every case-insensitive occurrence of ``query`` in ``doc`` the search-match colours."""
    match = QTextCharFormat()
    match.setBackground(QColor(SEARCH_MATCH_BACKGROUND))
    match.setForeground(QColor("black"))
    found = doc.find(query)
    while not found.isNull():
        found.mergeCharFormat(match)
        found = doc.find(query, found)


class _TurnDelegate(QStyledItemDelegate):
    """Draws a turn as rich text and edits its text in a line edit (see the module docstring)."""

    def __init__(self, owner: TurnList):
        super().__init__(owner)
        self._owner = owner
        self._sizes: dict[tuple[int, int, Shading, str], QSize] = {}  # laid out already

    def forget(self) -> None:
        """New turns are shown: the sizes laid out before no longer apply."""
        self._sizes.clear()

    def document(self, option: QStyleOptionViewItem, index: _Index, width: int) -> QTextDocument:
        turn: TurnRow = index.data(TURN_ROLE)
        palette = QPalette(option.palette)
        if option.state & QStyle.StateFlag.State_Selected:
            palette.setColor(
                QPalette.ColorRole.Text, palette.color(QPalette.ColorRole.HighlightedText)
            )
            palette.setColor(QPalette.ColorRole.Base, palette.color(QPalette.ColorRole.Highlight))
        doc = QTextDocument()
        doc.setDefaultFont(option.font)
        doc.setDocumentMargin(4)
        doc.setTextWidth(max(60, width))
        cursor = QTextCursor(doc)
        cursor.insertText(f"[{clock(turn.start)}]  ", formats.committed_format(palette))
        if turn.speaker:
            cursor.insertText(f"{turn.speaker}: ", formats.speaker_format(palette))
        text = index.data(Qt.ItemDataRole.UserRole)
        formats.insert_words(cursor, text, turn.shown_probabilities, palette, self._owner.shading)
        if turn.corrected:
            cursor.insertText("  ✎", formats.tentative_format(palette))
        if turn.translation:
            points = option.font.pointSizeF()
            cursor.insertText(
                "\u2028" + turn.translation, formats.translation_format(palette, points)
            )
        if self._owner.query:
            _mark(doc, self._owner.query)
        return doc

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: _Index) -> None:
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        opt.text = ""  # the background and focus only; text below
        widget = opt.widget
        style = widget.style() if widget is not None else self._owner.style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, opt, painter, widget)
        rect = opt.rect
        doc = self.document(opt, index, rect.width())
        painter.save()
        painter.translate(rect.topLeft())
        doc.drawContents(painter)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: _Index) -> QSize:  # noqa: N802
        width = self._owner.viewport().width() - 2 * self._owner.spacing()
        turn: TurnRow = index.data(TURN_ROLE)
        key = (turn.id, width, self._owner.shading, option.font.key())
        size = self._sizes.get(key)
        if size is None:  # each turn is laid out once per width, as plain text in its fonts
            if len(self._sizes) > _SIZES_KEPT:
                self._sizes.clear()
            text = index.data(Qt.ItemDataRole.UserRole)
            height = _plain_height(turn, text, option.font, width)
            size = self._sizes[key] = QSize(max(60, width), height)
        return size

    def createEditor(  # noqa: N802 - Qt naming
        self, parent: QWidget, option: QStyleOptionViewItem, index: _Index
    ) -> QWidget:
        editor = QLineEdit(parent)
        editor.setAccessibleName("Correct this turn")
        return editor

    def setEditorData(self, editor: QWidget, index: _Index) -> None:  # noqa: N802
        if isinstance(editor, QLineEdit):
            turn: TurnRow = index.data(TURN_ROLE)
            editor.setText(turn.text)
            editor.selectAll()

    def setModelData(  # noqa: N802 - Qt naming
        self, editor: QWidget, model: QAbstractItemModel, index: _Index
    ) -> None:
        """The list shows what the history holds: the correction is asked for, not set here."""
        turn: TurnRow = index.data(TURN_ROLE)
        if isinstance(editor, QLineEdit) and " ".join(editor.text().split()) != turn.text:
            self._owner.correction_requested.emit(turn, editor.text())

    def updateEditorGeometry(  # noqa: N802 - Qt naming
        self, editor: QWidget, option: QStyleOptionViewItem, index: _Index
    ) -> None:
        editor.setGeometry(option.rect)

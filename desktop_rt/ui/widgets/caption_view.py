"""Live captions: one paragraph per turn, committed words in full colour, tentative words dimmed.

The turn being spoken is set apart (a tinted block); earlier turns are plain paragraphs. Updates
touch only the changed paragraph, and only the last :attr:`CaptionView.max_turns` turns stay on
screen (the history keeps every one), so cost and memory stay flat however long it runs.
Tentative words fill at most one line more than the paragraph had, so the view never jumps by
more than a line per update. The view follows new text while the user is at the bottom (else a
"Jump to latest" button shows). Committed words are announced to screen readers, rate-limited
(:class:`~desktop_rt.ui.widgets.announcements.AnnouncementQueue`); :attr:`announced` echoes them.
A turn's English translation, when live translation is on, is a second line of its paragraph
(after a line separator, smaller and in a muted colour; its tentative tail dimmed as well).
Words the recognizer was unsure of are shaded (:mod:`~desktop_rt.ui.widgets.caption_formats`,
:meth:`CaptionView.set_shading`). A final turn can be corrected in place: double-click it, F2 on
the line holding the keyboard cursor (else the latest final line), or "Correct this line…" in
its context menu; Enter saves. The view then shows the correction and emits
:attr:`CaptionView.corrected` (turn, text) for the caller to save; tentative text is never
editable.
"""

from __future__ import annotations

import time

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import (
    QAccessible,
    QAccessibleAnnouncementEvent,
    QColor,
    QFont,
    QPalette,
    QResizeEvent,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
)
from PySide6.QtWidgets import QPushButton, QTextEdit, QWidget

from desktop_rt.live.transcript_recorder import CaptionTurn
from desktop_rt.ui.widgets import caption_formats as formats
from desktop_rt.ui.widgets.announcements import AnnouncementQueue
from desktop_rt.ui.widgets.caption_corrector import CaptionCorrector
from desktop_rt.ui.widgets.caption_formats import Shading

__all__ = ["CaptionView"]

_FOLLOW_SLACK = 8  # pixels from the bottom that still count as "at the bottom"
_LINE_BREAK = "\u2028"  # a line break inside a paragraph: one turn stays one block
MAX_TURNS = 300  # turns kept on screen (about an hour and a half of speech)


class CaptionView(QTextEdit):
    """Read-only caption area. Feed it :class:`CaptionTurn` values with :meth:`show_turn`."""

    following_changed = Signal(bool)
    announced = Signal(str)  # committed words just announced to screen readers
    corrected = Signal(object, str)  # CaptionTurn, the text the user wrote for it

    def __init__(
        self,
        parent: QWidget | None = None,
        font_size: int = 20,
        max_turns: int = MAX_TURNS,
        announce_interval: float = 2.0,
    ):
        super().__init__(parent)
        self.max_turns = max(1, max_turns)
        self._dropped: dict[str, None] = {}  # ids of turns scrolled off the top (bounded, ordered)
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self.setFrameShape(QTextEdit.Shape.NoFrame)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.setCursorWidth(0)  # selectable from the keyboard, but no blinking caret
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setTabChangesFocus(True)
        self.setPlaceholderText("Hold Space or the Talk button, and speak.")
        self.document().setDocumentMargin(18)
        self._blocks: dict[str, int] = {}  # item id -> block number
        self._lines: dict[str, int] = {}  # item id -> lines its paragraph showed last
        self._turns: dict[str, CaptionTurn] = {}
        self._corrections: dict[str, str] = {}  # item id -> the user's text for it
        self.shading = Shading()
        self._announcements = AnnouncementQueue(announce_interval)
        self._announce_timer = QTimer(self)
        self._announce_timer.setSingleShot(True)
        self._announce_timer.timeout.connect(self._announce)
        self._current: str | None = None
        self._follow = True
        self._jump = QPushButton("↓ Jump to latest", self)
        self._jump.setCursor(Qt.CursorShape.PointingHandCursor)
        self._jump.setAccessibleName("Jump to the latest captions")
        self._jump.setStyleSheet("QPushButton { padding: 4px 10px; border-radius: 10px; }")
        self._jump.hide()
        self._jump.clicked.connect(self.scroll_to_latest)
        self.verticalScrollBar().valueChanged.connect(self._scrolled)
        self.verticalScrollBar().rangeChanged.connect(self._range_changed)
        self.set_font_size(font_size)
        self.corrector = CaptionCorrector(self)

    # ---- public API ----------------------------------------------------------------------------

    @property
    def following(self) -> bool:
        return self._follow

    def set_font_size(self, points: int) -> None:
        font = QFont(self.font())
        font.setPointSize(int(points))
        self.setFont(font)
        self.document().setDefaultFont(font)

    def set_font_family(self, family: str | None) -> None:
        """Use ``family`` for the captions (None or "": the application's font)."""
        font = QFont(self.font())
        font.setFamily(family or QFont().family())
        self.setFont(font)
        self.document().setDefaultFont(font)

    def set_shading(self, shading: Shading) -> None:
        """Shade uncertain words (or not) from now on; every turn is drawn again."""
        if shading != self.shading:
            self.shading = shading
            self.restyle()

    def restyle(self) -> None:
        """Draw every turn again in the palette now in force (after a theme change)."""
        turns, corrections = self.turns(), dict(self._corrections)
        self.clear_captions()
        self._corrections.update(corrections)
        for turn in turns:
            self.show_turn(turn)

    def font_size(self) -> int:
        return self.font().pointSize()

    def turns(self) -> list[CaptionTurn]:
        return sorted(self._turns.values(), key=lambda t: self._blocks[t.item_id])

    def clear_captions(self) -> None:
        self.clear()
        self._blocks.clear()
        self._lines.clear()
        self._turns.clear()
        self._corrections.clear()
        self._dropped.clear()
        self._current = None

    def committed_text(self) -> str:
        texts = (self.shown_committed(t.item_id) for t in self.turns())
        return " ".join(t for t in texts if t)

    def shown_committed(self, item_id: str) -> str:
        """The committed words shown for ``item_id``: the user's correction, if any."""
        turn = self._turns.get(item_id)
        return "" if turn is None else self._corrections.get(item_id, turn.committed).strip()

    def show_turn(self, turn: CaptionTurn) -> None:
        """Show the latest state of one turn (new turns go to the end)."""
        if turn.removed:
            self._remove(turn.item_id)
            return
        new = turn.item_id not in self._blocks
        if new and (not turn.text.strip() or turn.item_id in self._dropped):
            return
        self._turns[turn.item_id] = turn
        doc = self.document()
        cursor = QTextCursor(doc)
        if new:
            cursor.movePosition(QTextCursor.MoveOperation.End)
            if self._blocks:
                cursor.insertBlock()
            self._blocks[turn.item_id] = cursor.blockNumber()
        else:
            cursor = QTextCursor(doc.findBlockByNumber(self._blocks[turn.item_id]))
            cursor.movePosition(
                QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor
            )
            cursor.removeSelectedText()
        committed = turn.committed.lstrip() if turn.committed else ""
        correction = self._corrections.get(turn.item_id)
        if turn.speaker:  # meeting mode: "You: ", "Others: "
            cursor.insertText(f"{turn.speaker}: ", formats.speaker_format(self.palette()))
        if correction is not None:
            committed = correction
            cursor.insertText(committed, formats.committed_format(self.palette()))
        else:
            formats.insert_words(
                cursor, committed, turn.probabilities, self.palette(), self.shading
            )
        tentative = turn.tentative if turn.committed else turn.tentative.lstrip()
        if tentative:
            cursor.insertText(tentative, self._tentative_format())
        self._limit_lines(turn.item_id, len(committed))
        self._insert_translation(turn)
        if committed and correction is None:
            self._announcements.committed(turn.item_id, committed)
            self._announce()
        if new:
            if self._current in self._blocks:
                self._style_block(self._current, current=False)
            self._current = turn.item_id
        if turn.item_id == self._current:
            self._style_block(turn.item_id, current=True, final=turn.final)
        if new and len(self._blocks) > self.max_turns:
            self._drop_oldest()
        if self._follow:
            self.scroll_to_latest()

    def _limit_lines(self, item_id: str, committed_chars: int) -> None:
        """Cut the tentative tail of a paragraph to one line more than it showed before (and
        never more than one line past its committed words)."""
        block = self.document().findBlockByNumber(self._blocks[item_id])
        self.document().documentLayout().blockBoundingRect(block)  # lays the paragraph out now
        layout = block.layout()
        count = layout.lineCount()
        if count == 0:
            return
        last_committed = layout.lineForTextPosition(max(0, committed_chars - 1)).lineNumber()
        before = self._lines.get(item_id, 0)
        limit = min(last_committed + 1, max(last_committed, before))
        if count - 1 > limit:
            line = layout.lineAt(limit)
            cut = max(committed_chars, line.textStart() + line.textLength())
            cursor = QTextCursor(block)
            cursor.setPosition(block.position() + cut)
            cursor.movePosition(
                QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor
            )
            cursor.removeSelectedText()
            self.document().documentLayout().blockBoundingRect(block)
            count = block.layout().lineCount()
        self._lines[item_id] = count

    def _insert_translation(self, turn: CaptionTurn) -> None:
        """The turn's English line at the end of its paragraph (none without translation)."""
        final, tentative = turn.translation.strip(), turn.translation_tentative
        if not final and not tentative.strip():
            return
        block = self.document().findBlockByNumber(self._blocks[turn.item_id])
        cursor = QTextCursor(block)
        cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)
        cursor.insertText(_LINE_BREAK, self._translation_format())
        cursor.insertText(final, self._translation_format())
        tentative = tentative if final else tentative.lstrip()
        if tentative:
            cursor.insertText(tentative, self._translation_format(tentative=True))

    def translation_text(self, item_id: str) -> str:
        """The English line shown for ``item_id`` ("" when there is none)."""
        number = self._blocks.get(item_id)
        if number is None:
            return ""
        text = self.document().findBlockByNumber(number).text()
        return text.partition(_LINE_BREAK)[2]

    def _announce(self) -> None:
        """Tell screen readers the committed words queued, unless that was done too recently."""
        now = time.monotonic()
        text = self._announcements.take(now)
        if text:
            event = QAccessibleAnnouncementEvent(self, text)
            event.setPoliteness(QAccessible.AnnouncementPoliteness.Polite)
            QAccessible.updateAccessibility(event)
            self.announced.emit(text)
        due = self._announcements.due(now)
        if due is not None and not self._announce_timer.isActive():
            self._announce_timer.start(max(1, round(due * 1000)))

    def scroll_to_latest(self) -> None:
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())
        self._set_follow(True)

    # ---- corrections (gestures and the editor: caption_corrector) ----------------------------

    def item_of_block(self, number: int) -> str | None:
        """The turn drawn as paragraph ``number``, if any."""
        return next((item for item, n in self._blocks.items() if n == number), None)

    def editable(self, item_id: str | None) -> bool:
        """A final turn with words (tentative text is never corrected)."""
        turn = self._turns.get(item_id or "")
        return turn is not None and turn.final and bool(self.shown_committed(turn.item_id))

    def block_number(self, item_id: str) -> int:
        return self._blocks[item_id]

    def apply_correction(self, item_id: str, text: str) -> bool:
        """Show ``text`` for the final turn ``item_id`` and emit :attr:`corrected`; False (and
        nothing changes) for a turn that is not editable or a text left blank or unchanged."""
        text = " ".join(text.split())
        if not self.editable(item_id) or not text or text == self.shown_committed(item_id):
            return False
        turn = self._turns[item_id]
        self._corrections[item_id] = text
        if text == turn.committed.strip():  # back to what was recognised
            del self._corrections[item_id]
        self.show_turn(turn)
        self.corrected.emit(turn, text)
        return True

    # ---- formats -------------------------------------------------------------------------------

    def _tentative_format(self) -> QTextCharFormat:
        return formats.tentative_format(self.palette())

    def _translation_format(self, tentative: bool = False) -> QTextCharFormat:
        return formats.translation_format(self.palette(), self.font().pointSizeF(), tentative)

    def _style_block(self, item_id: str, current: bool, final: bool = False) -> None:
        block = self.document().findBlockByNumber(self._blocks[item_id])
        fmt = QTextBlockFormat()
        fmt.setBottomMargin(10)
        fmt.setLineHeight(120, QTextBlockFormat.LineHeightTypes.ProportionalHeight.value)
        if current:
            highlight = self.palette().color(QPalette.ColorRole.Highlight)
            tint = QColor(highlight)
            tint.setAlpha(28 if final else 45)
            fmt.setBackground(tint)
            fmt.setTopMargin(14)
            fmt.setLeftMargin(6)
        cursor = QTextCursor(block)
        cursor.setBlockFormat(fmt)

    def _drop_oldest(self) -> None:
        oldest = next(key for key, number in self._blocks.items() if number == 0)
        self._remove(oldest)
        self._dropped[oldest] = None
        while len(self._dropped) > 4 * self.max_turns:
            del self._dropped[next(iter(self._dropped))]

    def _remove(self, item_id: str) -> None:
        number = self._blocks.pop(item_id, None)
        self._turns.pop(item_id, None)
        self._lines.pop(item_id, None)
        self._corrections.pop(item_id, None)
        if number is None:
            return
        block = self.document().findBlockByNumber(number)
        cursor = QTextCursor(self.document())
        if block.previous().isValid():  # take the paragraph break before it, too
            cursor.setPosition(block.position() - 1)
            cursor.setPosition(
                block.position() + block.length() - 1, QTextCursor.MoveMode.KeepAnchor
            )
        elif block.next().isValid():
            cursor.setPosition(block.position())
            cursor.setPosition(block.next().position(), QTextCursor.MoveMode.KeepAnchor)
        else:
            cursor.setPosition(block.position())
            cursor.movePosition(
                QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor
            )
        cursor.removeSelectedText()
        for key, value in self._blocks.items():
            if value > number:
                self._blocks[key] = value - 1
        if self._current == item_id:
            self._current = (
                max(self._blocks, key=self._blocks.__getitem__) if self._blocks else None
            )
            if self._current is not None:
                self._style_block(
                    self._current, current=True, final=self._turns[self._current].final
                )

    # ---- scrolling -----------------------------------------------------------------------------

    def _set_follow(self, follow: bool) -> None:
        if follow != self._follow:
            self._follow = follow
            self.following_changed.emit(follow)
        self._jump.setVisible(not follow)
        if not follow:
            self._place_jump()

    def _scrolled(self, value: int) -> None:
        bar = self.verticalScrollBar()
        self._set_follow(value >= bar.maximum() - _FOLLOW_SLACK)

    def _range_changed(self, _low: int, high: int) -> None:
        if self._follow:
            self.verticalScrollBar().setValue(high)

    def _place_jump(self) -> None:
        self._jump.adjustSize()
        viewport = self.viewport().geometry()
        self._jump.move(
            viewport.right() - self._jump.width() - 12, viewport.bottom() - self._jump.height() - 12
        )

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt naming
        super().resizeEvent(event)
        if self._jump.isVisible():
            self._place_jump()

"""An always-on-top caption strip: translucent, frameless, movable by dragging, two lines of text.

It shows the newest turn (committed words bright, tentative words dimmed) over whatever is on
screen, e.g. a video call; a line the user corrected in the window shows the correction
(:meth:`CaptionOverlay.apply_correction`). Drag it anywhere; its place is remembered (``moved`` carries the
geometry, hex-encoded). Its colours follow the theme (:meth:`CaptionOverlay.set_colors`): a dark
strip, a light one, or opaque black with yellow text in high contrast.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QPoint, QRectF, Qt, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QGuiApplication,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QTextDocument,
)
from PySide6.QtWidgets import QWidget

from desktop_rt.config import OverlaySettings
from desktop_rt.live.transcript_recorder import CaptionTurn
from desktop_rt.ui.theme import ThemeColors

__all__ = ["CaptionOverlay"]

CORRECTIONS_KEPT = 16  # recent corrected lines whose text replaces the recognised one


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class CaptionOverlay(QWidget):
    moved = Signal(str)

    def __init__(self, settings: OverlaySettings | None = None, parent: QWidget | None = None):
        super().__init__(
            parent,
            Qt.WindowType.Tool
            | Qt.WindowType.FramelessWindowHint
            | Qt.WindowType.WindowStaysOnTopHint,
        )
        self.setAttribute(Qt.WidgetAttribute.WA_TranslucentBackground)
        self.setAttribute(Qt.WidgetAttribute.WA_ShowWithoutActivating)
        self.setWindowTitle("desktop-rt captions")
        self.setCursor(Qt.CursorShape.SizeAllCursor)
        self.setToolTip("Drag to move. Hide it from the main window (Ctrl+Shift+O).")
        self._committed = ""
        self._tentative = ""
        self._item: str | None = None
        self._corrections: dict[str, str] = {}  # item id -> the user's text (newest last)
        self._drag: QPoint | None = None
        self._family: str | None = None
        self._colors = ("#0c0e14", "#ffffff", "#a7adb8", False)  # background, text, dim, opaque
        settings = settings if settings is not None else OverlaySettings()
        self._settings = settings
        self.resize(900, 120)
        self.apply(settings)
        if not settings.geometry:
            screen = QGuiApplication.primaryScreen()
            if screen is not None:
                area = screen.availableGeometry()
                self.move(area.center().x() - self.width() // 2, area.bottom() - self.height() - 60)

    def apply(self, settings: OverlaySettings) -> None:
        self._settings = settings
        font = QFont(self.font())
        font.setFamily(self._family or QFont().family())
        font.setPointSize(settings.font_size)
        font.setWeight(QFont.Weight.DemiBold)
        self.setFont(font)
        self.setFixedHeight(int(font.pointSize() * 2 * 1.6 + 36))
        if settings.geometry:
            self.restoreGeometry(QByteArray.fromHex(settings.geometry.encode()))
        self.update()

    def set_font_family(self, family: str | None) -> None:
        self._family = family or None
        self.apply(self._settings)

    def set_colors(self, colors: ThemeColors) -> None:
        """Paint in the theme's overlay colours (high contrast: always opaque)."""
        self._colors = (
            colors.overlay_bg,
            colors.overlay_text,
            colors.overlay_dim,
            colors.high_contrast,
        )
        self.update()

    @property
    def colors(self) -> tuple[str, str, str]:
        """Background, committed text and tentative text colours in use."""
        return self._colors[0], self._colors[1], self._colors[2]

    @property
    def text(self) -> str:
        return (self._committed + self._tentative).strip()

    def show_turn(self, turn: CaptionTurn) -> None:
        if turn.removed:
            if turn.item_id == self._item:
                self._committed = self._tentative = ""
                self.update()
            return
        if not turn.text.strip():
            return
        self._item = turn.item_id
        self._committed = self._corrections.get(turn.item_id, turn.committed)
        self._tentative = turn.tentative
        self.update()

    def apply_correction(self, item_id: str, text: str) -> None:
        """The user corrected line ``item_id``: show ``text`` for it (now, if it is shown)."""
        self._corrections.pop(item_id, None)
        self._corrections[item_id] = text
        while len(self._corrections) > CORRECTIONS_KEPT:
            del self._corrections[next(iter(self._corrections))]
        if item_id == self._item:
            self._committed = text
            self.update()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt naming
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        background, text, dim, opaque = self._colors
        fill = QColor(background)
        fill.setAlphaF(1.0 if opaque else self._settings.opacity)
        painter.setBrush(fill)
        painter.drawRoundedRect(QRectF(self.rect()).adjusted(1, 1, -1, -1), 14, 14)
        doc = QTextDocument()
        doc.setDefaultFont(self.font())
        doc.setTextWidth(self.width() - 40)
        committed = _escape(self._committed.lstrip())
        tentative = _escape(self._tentative if self._committed else self._tentative.lstrip())
        if not (committed or tentative):
            committed = f'<span style="color:{dim}">Captions will appear here</span>'
        doc.setHtml(
            f'<div style="color:{text}">{committed}<span style="color:{dim}">{tentative}</span></div>'
        )
        # Keep the newest words in view: start at the first whole line that fits above the end.
        avail = self.height() - 24
        top = self._first_visible_line(doc, avail)
        painter.translate(20, 12 - top)
        clip = QRectF(0, top, self.width() - 40, avail)
        painter.setClipRect(clip)
        doc.drawContents(painter, clip)
        painter.end()

    @staticmethod
    def _first_visible_line(doc: QTextDocument, height: float) -> float:
        lines: list[tuple[float, float]] = []
        block = doc.begin()
        while block.isValid():
            base = doc.documentLayout().blockBoundingRect(block).top()
            layout = block.layout()
            for i in range(layout.lineCount()):
                line = layout.lineAt(i)
                lines.append((base + line.y(), base + line.y() + line.height()))
            block = block.next()
        if not lines:
            return 0.0
        bottom = lines[-1][1]
        return next((t for t, _ in lines if bottom - t <= height), lines[-1][0])

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if event.button() == Qt.MouseButton.LeftButton:
            self._drag = event.globalPosition().toPoint() - self.frameGeometry().topLeft()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._drag is not None:
            self.move(event.globalPosition().toPoint() - self._drag)

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        if self._drag is not None:
            self._drag = None
            self.moved.emit(self.saveGeometry().toHex().toStdString())

"""A microphone meter: input level and speech probability, with the hands-free threshold marked.

Readings only store a value; a :class:`QTimer` repaints at ``fps`` when something changed
(friture's rule: audio never drives painting). The top bar is the level in dBFS (-60..0), the
bottom bar the speech probability (0..1) with a line at the voice-activity threshold: speech
that crosses the line starts a turn in hands-free mode.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from desktop_rt.live.capture import LevelReading

__all__ = ["LevelMeter"]

_FLOOR_DB = -60.0


class LevelMeter(QWidget):
    def __init__(self, parent: QWidget | None = None, threshold: float = 0.5, fps: int = 30):
        super().__init__(parent)
        self._level = 0.0  # 0..1 of the dB scale
        self._speech = 0.0
        self._peak = 0.0
        self._threshold = threshold
        self._dirty = True
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setToolTip(
            "Top: input level. Bottom: how sure the voice detector is that you speak; "
            "the line is the hands-free threshold."
        )
        self._timer = QTimer(self)
        self._timer.setInterval(max(10, 1000 // fps))
        self._timer.timeout.connect(self._tick)
        self._timer.start()
        self.repaints = 0

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt naming
        return QSize(220, 22)

    @property
    def threshold(self) -> float:
        return self._threshold

    @property
    def level(self) -> float:
        return self._level

    @property
    def speech(self) -> float:
        return self._speech

    def set_threshold(self, threshold: float) -> None:
        self._threshold = min(1.0, max(0.0, float(threshold)))
        self._dirty = True

    def set_reading(self, reading: LevelReading) -> None:
        level = min(1.0, max(0.0, (reading.dbfs - _FLOOR_DB) / -_FLOOR_DB))
        self._level = level
        self._peak = max(self._peak, level)
        if reading.speech is not None:
            self._speech = reading.speech
        self._dirty = True

    def reset(self) -> None:
        self._level = self._speech = self._peak = 0.0
        self._dirty = True

    def _tick(self) -> None:
        self._peak = max(self._level, self._peak - 0.02)
        if self._dirty or self._peak > self._level:
            self._dirty = False
            self.update()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt naming
        self.repaints += 1
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        pal = self.palette()
        w, h = self.width(), self.height()
        gap = 3
        bar_h = (h - gap) / 2
        trough = pal.color(QPalette.ColorRole.Midlight)
        for row in range(2):
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(trough)
            painter.drawRoundedRect(QRectF(0, row * (bar_h + gap), w, bar_h), 3, 3)
        level_color = QColor("#3f9c5a") if self._level < 0.85 else QColor("#d9822b")
        painter.setBrush(level_color)
        painter.drawRoundedRect(QRectF(0, 0, w * self._level, bar_h), 3, 3)
        peak_x = w * self._peak
        painter.setPen(QPen(level_color.darker(130), 2))
        painter.drawLine(int(peak_x), 1, int(peak_x), int(bar_h) - 1)
        speaking = self._speech >= self._threshold
        speech_color = (
            pal.color(QPalette.ColorRole.Highlight)
            if speaking
            else pal.color(QPalette.ColorRole.Mid)
        )
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(speech_color)
        painter.drawRoundedRect(QRectF(0, bar_h + gap, w * self._speech, bar_h), 3, 3)
        x = w * self._threshold
        painter.setPen(QPen(pal.color(QPalette.ColorRole.Text), 2))
        painter.drawLine(int(x), int(bar_h + gap - 2), int(x), h)
        painter.end()

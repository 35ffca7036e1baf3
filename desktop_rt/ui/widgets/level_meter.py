"""A microphone meter: input level and speech probability, with the hands-free threshold marked.

Readings only store a value; a :class:`QTimer` paints frames at ``fps`` or the screen's rate,
whichever is lower, and runs only while something is left to show: it starts with a reading and
stops once a frame found nothing to repaint (friture's rule: audio never drives painting). A
frame repaints only the strips whose pixels changed (:meth:`MeterFrame.changes`): the ends of
the bars that moved and the peak mark; a colour change repaints its bar, a new threshold the
whole meter. The top bar is the level in dBFS (-60..0), the bottom bar the speech probability
(0..1) with a line at the voice-activity threshold: speech that crosses the line starts a turn
in hands-free mode. Colours and pens are made once per palette, not in each paint.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from PySide6.QtCore import QEvent, QRect, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QGuiApplication, QPainter, QPaintEvent, QPalette, QPen, QRegion
from PySide6.QtWidgets import QSizePolicy, QWidget

from desktop_rt.live.capture import LevelReading

__all__ = ["LevelMeter", "MeterFrame", "frame_interval_ms"]

_FLOOR_DB = -60.0
_HOT = 0.85  # the level bar turns orange from here
_GAP = 3  # pixels between the two bars
_EDGE = 4  # pixels around a moved bar end: its rounded corner (3) and antialiasing
_MARK = 3  # pixels around the peak mark's x (a 2 px pen, antialiased)
_PEAK_FALL = 0.02  # of the scale per frame
_RESTYLED = (
    QEvent.Type.PaletteChange,
    QEvent.Type.ApplicationPaletteChange,
    QEvent.Type.StyleChange,
)


def frame_interval_ms(fps: int, screen_hz: float) -> int:
    """Milliseconds between frames: ``fps`` at most, and never faster than the screen."""
    interval = 1000 / max(1, fps)
    if screen_hz > 0:
        interval = max(interval, 1000 / screen_hz)
    return max(10, round(interval))


@dataclass(frozen=True)
class MeterFrame:
    """What one frame shows: level, peak, speech probability and threshold, each 0..1."""

    level: float = 0.0
    peak: float = 0.0
    speech: float = 0.0
    threshold: float = 0.5

    def changes(self, old: MeterFrame, width: int, height: int) -> list[QRect]:
        """The rectangles of a ``width`` x ``height`` meter to repaint going from ``old`` to this."""
        bar_h = (height - _GAP) // 2
        rows = (QRect(0, 0, width, bar_h + 1), QRect(0, bar_h + 1, width, height - bar_h - 1))
        if self.threshold != old.threshold:
            return [QRect(0, 0, width, height)]
        out: list[QRect] = []
        if (self.level < _HOT) != (old.level < _HOT):
            out.append(rows[0])  # the level bar changes colour
        else:
            out += _strips(rows[0], width, (old.level, self.level), _EDGE)
            out += _marks(rows[0], width, (old.peak, self.peak))
        if (self.speech >= self.threshold) != (old.speech >= self.threshold):
            out.append(rows[1])  # speaking or not: the speech bar changes colour
        else:
            out += _strips(rows[1], width, (old.speech, self.speech), _EDGE)
        return out


def _strips(row: QRect, width: int, ends: tuple[float, float], margin: int) -> list[QRect]:
    """The strip of ``row`` between a bar's old and new end, when they are different pixels."""
    a, b = (round(width * v) for v in ends)
    if a == b:
        return []
    left, right = min(a, b) - margin, max(a, b) + margin
    return [QRect(left, row.top(), right - left + 1, row.height())]


def _marks(row: QRect, width: int, xs: tuple[float, float]) -> list[QRect]:
    """The old and the new mark of ``row`` when the mark moved by a pixel or more."""
    old, new = (int(width * v) for v in xs)
    if old == new:
        return []
    return [QRect(x - _MARK, row.top(), 2 * _MARK + 1, row.height()) for x in (old, new)]


@dataclass(frozen=True)
class _Inks:
    """The meter's colours and pens, made once per palette (a paint allocates none of them)."""

    track: QColor
    level: QColor
    hot: QColor
    level_mark: QPen
    hot_mark: QPen
    speaking: QColor
    quiet: QColor
    threshold: QPen

    @classmethod
    def of(cls, pal: QPalette) -> _Inks:
        level, hot = QColor("#3f9c5a"), QColor("#d9822b")
        return cls(
            track=pal.color(QPalette.ColorRole.Midlight),
            level=level,
            hot=hot,
            level_mark=QPen(level.darker(130), 2),
            hot_mark=QPen(hot.darker(130), 2),
            speaking=pal.color(QPalette.ColorRole.Highlight),
            quiet=pal.color(QPalette.ColorRole.Mid),
            threshold=QPen(pal.color(QPalette.ColorRole.Text), 2),
        )


class LevelMeter(QWidget):
    def __init__(self, parent: QWidget | None = None, threshold: float = 0.5, fps: int = 30):
        super().__init__(parent)
        self._now = MeterFrame(threshold=threshold)  # the latest readings
        self._shown = self._now  # what the last frame painted
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setToolTip(
            "Top: input level. Bottom: how sure the voice detector is that you speak; "
            "the line is the hands-free threshold."
        )
        screen = QGuiApplication.primaryScreen()
        self._timer = QTimer(self)
        self._timer.setInterval(frame_interval_ms(fps, screen.refreshRate() if screen else 0.0))
        self._timer.timeout.connect(self._tick)
        self.repaints = 0
        """Paint events so far (tests, benchmarks)."""
        self._inks = _Inks.of(self.palette())

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt naming
        return QSize(220, 22)

    @property
    def threshold(self) -> float:
        return self._now.threshold

    @property
    def level(self) -> float:
        return self._now.level

    @property
    def speech(self) -> float:
        return self._now.speech

    @property
    def frame_interval_ms(self) -> int:
        return self._timer.interval()

    @property
    def animating(self) -> bool:
        """Whether the frame timer runs (it stops once there is nothing left to repaint)."""
        return self._timer.isActive()

    def set_threshold(self, threshold: float) -> None:
        self._changed(replace(self._now, threshold=min(1.0, max(0.0, float(threshold)))))

    def set_reading(self, reading: LevelReading) -> None:
        level = min(1.0, max(0.0, (reading.dbfs - _FLOOR_DB) / -_FLOOR_DB))
        speech = self._now.speech if reading.speech is None else reading.speech
        self._changed(
            replace(self._now, level=level, peak=max(self._now.peak, level), speech=speech)
        )

    def reset(self) -> None:
        self._changed(MeterFrame(threshold=self._now.threshold))

    def _changed(self, frame: MeterFrame) -> None:
        self._now = frame
        if not self._timer.isActive():
            self._timer.start()

    def _tick(self) -> None:
        now = self._now
        self._now = replace(now, peak=max(now.level, now.peak - _PEAK_FALL))
        rects = self._now.changes(self._shown, self.width(), self.height())
        self._shown = self._now
        if not rects:
            if self._now.peak <= self._now.level:
                self._timer.stop()  # nothing moves until the next reading
            return
        region = QRegion()
        for rect in rects:
            region = region.united(rect)
        self.update(region)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 - Qt naming
        if event.type() in _RESTYLED:
            self._inks = _Inks.of(self.palette())
        super().changeEvent(event)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt naming
        """Draw the last frame (:attr:`_shown`); Qt clips it to the region that changed."""
        self.repaints += 1
        frame, inks = self._shown, self._inks
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        w, h = self.width(), self.height()
        bar_h = (h - _GAP) / 2
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(inks.track)
        for row in range(2):
            painter.drawRoundedRect(QRectF(0, row * (bar_h + _GAP), w, bar_h), 3, 3)
        hot = frame.level >= _HOT
        painter.setBrush(inks.hot if hot else inks.level)
        painter.drawRoundedRect(QRectF(0, 0, w * frame.level, bar_h), 3, 3)
        peak_x = int(w * frame.peak)
        painter.setPen(inks.hot_mark if hot else inks.level_mark)
        painter.drawLine(peak_x, 1, peak_x, int(bar_h) - 1)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(inks.speaking if frame.speech >= frame.threshold else inks.quiet)
        painter.drawRoundedRect(QRectF(0, bar_h + _GAP, w * frame.speech, bar_h), 3, 3)
        x = int(w * frame.threshold)
        painter.setPen(inks.threshold)
        painter.drawLine(x, int(bar_h + _GAP - 2), x, h)
        painter.end()

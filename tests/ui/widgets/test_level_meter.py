"""The level meter (desktop_rt/ui/widgets/level_meter.py): frames only for what changed."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QObject, QRect
from PySide6.QtGui import QColor, QGuiApplication, QPaintEvent, QPalette

from desktop_rt.live.capture import LevelReading
from desktop_rt.ui.widgets.level_meter import LevelMeter, MeterFrame, frame_interval_ms

W, H = 220, 22


class _Paints(QObject):
    """The rectangles of the paint events one widget receives (a real event filter)."""

    def __init__(self, widget):
        super().__init__(widget)
        self.rects: list[QRect] = []
        widget.installEventFilter(self)

    def eventFilter(self, watched, event):  # noqa: N802 - Qt naming
        if event.type() == QEvent.Type.Paint and isinstance(event, QPaintEvent):
            self.rects.append(event.region().boundingRect())
        return False


def _db(fraction: float) -> float:
    """The dBFS that fills ``fraction`` of the level bar."""
    return -60.0 + 60.0 * fraction


@pytest.fixture
def meter(qtbot):
    widget = LevelMeter(threshold=0.6)
    qtbot.addWidget(widget)
    widget.setFixedSize(W, H)
    widget.show()
    qtbot.waitExposed(widget)
    qtbot.waitUntil(lambda: not widget.animating, timeout=5_000)
    return widget


def test_a_moved_level_repaints_the_strip_at_the_bar_end_only(meter, qtbot):
    meter.set_reading(LevelReading(_db(0.5), None, 0.0))
    qtbot.waitUntil(lambda: not meter.animating, timeout=5_000)  # the peak settles too
    paints = _Paints(meter)
    meter.set_reading(LevelReading(_db(0.55), None, 1.0))
    qtbot.waitUntil(lambda: bool(paints.rects), timeout=5_000)
    rect = paints.rects[0]
    assert rect.left() <= round(W * 0.5) and rect.right() >= round(W * 0.55)
    assert rect.width() < W // 4  # a strip, not the whole bar
    assert rect.bottom() < H // 2  # the level bar's row: the speech bar did not change


def test_readings_between_frames_make_one_frame_and_then_the_timer_stops(meter, qtbot):
    start = meter.repaints
    for step in range(1, 41):  # 40 readings, faster than any frame: nothing is painted yet
        meter.set_reading(LevelReading(_db(step / 50), step / 50, float(step)))
    assert meter.repaints == start and meter.animating
    qtbot.waitUntil(lambda: meter.repaints > start, timeout=5_000)
    qtbot.waitUntil(lambda: not meter.animating, timeout=5_000)
    assert meter.repaints == start + 1


def test_a_change_smaller_than_a_pixel_paints_nothing(meter, qtbot):
    meter.set_reading(LevelReading(_db(0.5), None, 0.0))
    qtbot.waitUntil(lambda: not meter.animating, timeout=5_000)
    start = meter.repaints
    meter.set_reading(LevelReading(_db(0.5) + 0.01, None, 1.0))  # 0.04 px
    assert meter.animating
    qtbot.waitUntil(lambda: not meter.animating, timeout=5_000)
    assert meter.repaints == start


def test_colour_and_threshold_changes_repaint_their_bar_or_the_whole_meter():
    quiet = MeterFrame(level=0.5, peak=0.5, speech=0.2, threshold=0.6)
    hot = MeterFrame(level=0.9, peak=0.9, speech=0.2, threshold=0.6)
    assert hot.changes(quiet, W, H) == [QRect(0, 0, W, 10)]  # green to orange: the level row
    speaking = MeterFrame(level=0.5, peak=0.5, speech=0.7, threshold=0.6)
    assert speaking.changes(quiet, W, H) == [QRect(0, 10, W, 12)]  # the speech row
    lower = MeterFrame(level=0.5, peak=0.5, speech=0.2, threshold=0.3)
    assert lower.changes(quiet, W, H) == [QRect(0, 0, W, H)]
    assert quiet.changes(quiet, W, H) == []


def test_a_falling_peak_repaints_its_old_and_new_mark():
    before = MeterFrame(level=0.2, peak=0.6)
    after = MeterFrame(level=0.2, peak=0.58)
    marks = after.changes(before, W, H)
    assert [r.center().x() for r in marks] == [int(W * 0.6), int(W * 0.58)]
    assert all(r.width() <= 7 for r in marks)


def test_frames_come_at_most_at_the_screen_rate(qtbot):
    assert frame_interval_ms(30, 60.0) == 33
    assert frame_interval_ms(120, 60.0) == 17  # the screen is slower than asked
    assert frame_interval_ms(30, 24.0) == 42
    assert frame_interval_ms(30, 0.0) == 33  # no rate known: fps
    screen = QGuiApplication.primaryScreen()
    meter = LevelMeter(fps=1000)
    qtbot.addWidget(meter)
    assert meter.frame_interval_ms >= round(1000 / screen.refreshRate())


def _pixel(meter, x: float, row: int):
    """The colour the meter paints at ``x`` (of its width) in ``row`` (0 level, 1 speech)."""
    image = meter.grab().toImage()
    scale = image.width() / W
    y = H // 4 if row == 0 else 3 * H // 4
    return image.pixelColor(int(W * x * scale), int(y * scale)).name()


def test_the_meter_paints_levels_and_speech_in_the_palettes_colours(meter, qtbot):
    meter.set_reading(LevelReading(_db(0.5), 0.9, 0.0))
    qtbot.waitUntil(lambda: not meter.animating, timeout=5_000)
    pal = meter.palette()
    assert _pixel(meter, 0.25, 0) == "#3f9c5a"  # the level, under the hot mark
    assert _pixel(meter, 0.75, 0) == pal.color(QPalette.ColorRole.Midlight).name()
    assert _pixel(meter, 0.25, 1) == pal.color(QPalette.ColorRole.Highlight).name()
    meter.set_reading(LevelReading(_db(0.95), 0.1, 1.0))
    qtbot.waitUntil(lambda: not meter.animating, timeout=5_000)
    assert _pixel(meter, 0.5, 0) == "#d9822b"  # loud: orange
    assert _pixel(meter, 0.05, 1) == pal.color(QPalette.ColorRole.Mid).name()  # no speech


def test_a_new_palette_is_painted_with(meter, qtbot):
    meter.set_reading(LevelReading(_db(0.5), 0.9, 0.0))
    qtbot.waitUntil(lambda: not meter.animating, timeout=5_000)
    pal = QPalette(meter.palette())
    pal.setColor(QPalette.ColorRole.Highlight, QColor("#123456"))
    meter.setPalette(pal)
    assert _pixel(meter, 0.25, 1) == "#123456"

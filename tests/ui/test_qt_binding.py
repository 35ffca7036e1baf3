"""The Qt binding must keep Python's reference counts: PySide6 6.12.0 on Python 3.11 does not.

Every call of a C++ method returning void (``QPainter.drawLine``, ``QLabel.setText``, ...) there
takes one reference from ``None``; a window repainting a meter 30 times a second crashes within
seconds ("none_dealloc: deallocating None"). Python 3.12+ has an immortal ``None``, so only 3.11
is hit. Use PySide6-Essentials below 6.12 on Python 3.11.
"""

from __future__ import annotations

import sys

from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtWidgets import QLabel

from desktop_rt.ui.app import binding_problem


def test_void_calls_do_not_use_up_references_to_none(qtbot):
    label = QLabel()
    qtbot.addWidget(label)
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    before = sys.getrefcount(None)
    for _ in range(200):
        label.setText("x")
        painter.drawLine(0, 0, 4, 4)
        painter.setBrush(QColor("red"))
    after = sys.getrefcount(None)
    painter.end()
    assert after - before > -100, (
        "this PySide6 build leaks references to None: pin PySide6-Essentials<6.12"
    )
    assert binding_problem() is None

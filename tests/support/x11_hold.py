"""Run under a real X server (``python -m tests.support.x11_hold on|off``): hold Space for 2 s
through XTest and print, as JSON, what the window saw and the holds a TalkKeyFilter made."""

from __future__ import annotations

import ctypes
import json
import sys
import time

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget

from desktop_rt.ui.talk_key import TalkKeyFilter, enable_detectable_auto_repeat

SPACE_KEYCODE = 65  # the X keycode of Space on an evdev (Xvfb) keymap


class _Count(QObject):
    def __init__(self, window: QWidget):
        super().__init__()
        self.window = window
        self.seen = {"press": 0, "release": 0, "marked_repeat": 0}

    def eventFilter(self, watched, event):  # noqa: N802 - Qt naming
        if (
            watched is self.window
            and isinstance(event, QEvent)
            and event.type()
            in (
                QEvent.Type.KeyPress,
                QEvent.Type.KeyRelease,
            )
        ):
            self.seen["press" if event.type() == QEvent.Type.KeyPress else "release"] += 1
            self.seen["marked_repeat"] += int(event.isAutoRepeat())
        return False


def _spin(app: QApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents()


def main() -> None:
    app = QApplication([])
    detectable = enable_detectable_auto_repeat() if sys.argv[1] == "on" else False
    window = QWidget()
    window.resize(200, 100)
    window.show()
    window.activateWindow()
    holds: list[str] = []
    key = TalkKeyFilter(
        window, lambda _w: True, lambda: holds.append("down"), lambda: holds.append("up")
    )
    count = _Count(window)
    app.installEventFilter(key)
    app.installEventFilter(count)  # installed last, so it sees the events first
    _spin(app, 0.5)
    window.activateWindow()  # no window manager gives it focus
    window.setFocus()
    _spin(app, 0.5)
    display = ctypes.c_void_p(int(app.nativeInterface().display()))
    xtst, x11 = ctypes.CDLL("libXtst.so.6"), ctypes.CDLL("libX11.so.6")
    xtst.XTestFakeKeyEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
    x11.XFlush.argtypes = [ctypes.c_void_p]
    for down, seconds in ((1, 2.0), (0, 1.0)):
        xtst.XTestFakeKeyEvent(display, SPACE_KEYCODE, down, 0)
        x11.XFlush(display)
        _spin(app, seconds)
    print(json.dumps({"detectable": detectable, "holds": holds, **count.seen}))


if __name__ == "__main__":
    main()

"""A window with a talk key on a real X desktop, for holds that lose the keyboard midway.

Run as ``python -m tests.support.x11_focus_hold SCENARIO`` with ``DISPLAY`` set (a window
manager running). SCENARIO: ``plain`` (the window's own filter, reading Space's state from the
X server, as the app does), ``dialog`` (the same, and a dialog of the app takes the keyboard
0.3 s into a hold), ``no_reader`` (Space's state cannot be read, as off X11). Prints ``ready``
once the window has the keyboard, ``down``/``up`` as a hold starts/ends; on a line ``report`` on stdin
it prints, as JSON, the holds with their ``time.monotonic()`` (the machine's clock), whether
the window was active when each came, when the keyboard came to the window or left it (focus,
``[time, ours]``), the status messages and the dialog's clicks, then exits.
"""

from __future__ import annotations

import json
import sys
import time

from PySide6.QtCore import QSocketNotifier, QTimer
from PySide6.QtGui import QWindow
from PySide6.QtWidgets import QApplication, QDialog, QPushButton, QVBoxLayout, QWidget

from desktop_rt.ui.talk_key import TalkKeyFilter, enable_detectable_auto_repeat


class Rig:
    def __init__(self, scenario: str):
        self.scenario = scenario
        self.window = QWidget()
        self.window.setWindowTitle("talk key focus")
        self.window.resize(300, 120)
        self.talk = QPushButton("Talk", self.window)
        self.holds: list[dict[str, object]] = []
        self.messages: list[str] = []
        self.focus: list[tuple[float, bool]] = []  # when the keyboard came to or left the window
        self.clicks = 0
        self.dialog: QDialog | None = None
        self.key = TalkKeyFilter(
            self.window,
            lambda w: w is self.talk,
            lambda: self._hold("down"),
            lambda: self._hold("up"),
            **({"key_state": lambda: None} if scenario == "no_reader" else {}),
            on_lost=self.messages.append,
        )

    def _hold(self, what: str) -> None:
        active = self.window.isActiveWindow()
        self.holds.append({"hold": what, "time": time.monotonic(), "active": active})
        print(what, flush=True)
        if what == "down" and self.scenario == "dialog" and self.dialog is None:
            QTimer.singleShot(300, self._pop_dialog)

    def focus_moved(self, window: QWindow | None) -> None:
        ours = window is not None and window is self.window.windowHandle()
        self.focus.append((time.monotonic(), ours))

    def _pop_dialog(self) -> None:
        self.dialog = QDialog(self.window)
        self.dialog.setWindowTitle("a dialog of the app")
        ok = QPushButton("OK", self.dialog)
        QVBoxLayout(self.dialog).addWidget(ok)
        ok.clicked.connect(self._clicked)
        self.dialog.show()
        self.dialog.activateWindow()
        ok.setFocus()

    def _clicked(self) -> None:
        self.clicks += 1

    def report(self) -> dict[str, object]:
        return {
            "holds": self.holds,
            "messages": self.messages,
            "clicks": self.clicks,
            "focus": self.focus,
        }


def _wait_ready(app: QApplication, rig: Rig) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if rig.window.isActiveWindow() and rig.talk.hasFocus():
            print("ready", flush=True)
            return
        rig.window.activateWindow()
        rig.talk.setFocus()
        app.processEvents()
        time.sleep(0.05)
    print("the window never got the keyboard", flush=True)
    sys.exit(1)


def main() -> None:
    app = QApplication([])
    enable_detectable_auto_repeat()  # as the app's window does
    rig = Rig(sys.argv[1])
    rig.window.show()
    rig.key.install()
    _wait_ready(app, rig)
    app.focusWindowChanged.connect(rig.focus_moved)

    def command() -> None:
        if sys.stdin.readline().strip() == "report":
            print(json.dumps(rig.report()), flush=True)
            rig.key.uninstall()
            app.quit()

    notifier = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read)
    notifier.activated.connect(command)
    app.exec()


if __name__ == "__main__":
    main()

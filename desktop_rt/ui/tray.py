"""The tray icon: start/stop listening, show/hide the window and the overlay, retry the mic, quit.

Its icon and tooltip say what the app is doing: idle, listening, recording (audio is going to a
session), or that the microphone is silent or lost (with a Retry entry in its menu).
"""

from __future__ import annotations

from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from desktop_rt.engine.audio.sources import LOST, OPEN, SILENT, SourceStatus
from desktop_rt.ui.controller import AppController
from desktop_rt.ui.main_window import MainWindow

__all__ = ["AppTray"]


class AppTray(QSystemTrayIcon):
    """Built whether or not the desktop has a tray; shown only where one exists.

    ``icons``: idle, listening, recording. The menu is a child of the window, like the tray
    itself, so both go when the window is deleted, in the order Qt deletes children.
    """

    def __init__(
        self, controller: AppController, window: MainWindow, icons: tuple[QIcon, QIcon, QIcon]
    ):
        super().__init__(icons[0], window)
        self._icons = icons
        self.controller = controller
        self.window = window
        self._problem = ""
        menu = QMenu(window)
        self.listen_action = QAction("Start listening", menu)
        self.listen_action.triggered.connect(controller.toggle_listening)
        self.retry_action = QAction("Retry microphone", menu)
        self.retry_action.triggered.connect(controller.retry_microphone)
        self.retry_action.setVisible(False)
        self.window_action = QAction("Hide window", menu)
        self.window_action.triggered.connect(self.toggle_window)
        self.overlay_action = QAction("Show caption overlay", menu)
        self.overlay_action.triggered.connect(window.overlay_button.toggle)
        self.quit_action = QAction("Quit", menu)
        self.quit_action.triggered.connect(window.close)
        for action in (
            self.listen_action,
            self.retry_action,
            self.window_action,
            self.overlay_action,
        ):
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction(self.quit_action)
        self.menu = menu
        self.setContextMenu(menu)
        self.activated.connect(self._activated)
        controller.listening_changed.connect(lambda _on: self._refresh())
        controller.recording_changed.connect(lambda _on: self._refresh())
        controller.bridge.mic_status.connect(self._mic_status)
        window.overlay_button.toggled.connect(
            lambda on: self.overlay_action.setText(
                "Hide caption overlay" if on else "Show caption overlay"
            )
        )
        self._refresh()
        if QSystemTrayIcon.isSystemTrayAvailable():
            self.show()

    def _mic_status(self, status: SourceStatus) -> None:
        if status.state in (SILENT, LOST):
            new = status.message
            if new != self._problem and self.isVisible():
                self.showMessage("desktop-rt", new, QSystemTrayIcon.MessageIcon.Warning)
            self._problem = new
        elif status.state == OPEN:
            self._problem = ""
        self._refresh()

    def _refresh(self) -> None:
        c = self.controller
        listening, recording = c.listening, c.recording
        if not listening:
            self._problem = ""
        self.listen_action.setText("Stop listening" if listening else "Start listening")
        self.retry_action.setVisible(bool(self._problem))
        self.setIcon(self._icons[2] if recording else self._icons[1 if listening else 0])
        if self._problem:
            state = self._problem
        elif recording:
            state = "recording"
        else:
            state = "listening" if listening else "not listening"
        self.setToolTip(f"desktop-rt — {state}")

    def toggle_window(self) -> None:
        if self.window.isVisible():
            self.window.hide()
            self.window_action.setText("Show window")
        else:
            self.window.show()
            self.window.raise_()
            self.window.activateWindow()
            self.window_action.setText("Hide window")

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason == QSystemTrayIcon.ActivationReason.Trigger:
            self.toggle_window()

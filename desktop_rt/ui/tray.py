"""The tray icon: start/stop listening, show/hide the window and the overlay, quit."""

from __future__ import annotations

from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from desktop_rt.ui.controller import AppController
from desktop_rt.ui.main_window import MainWindow

__all__ = ["AppTray"]


class AppTray(QSystemTrayIcon):
    """Built whether or not the desktop has a tray; shown only where one exists."""

    def __init__(
        self, controller: AppController, window: MainWindow, icon: QIcon, listening_icon: QIcon
    ):
        super().__init__(icon, window)
        self._icons = (icon, listening_icon)
        self.controller = controller
        self.window = window
        menu = QMenu()
        self.listen_action = QAction("Start listening", menu)
        self.listen_action.triggered.connect(controller.toggle_listening)
        self.window_action = QAction("Hide window", menu)
        self.window_action.triggered.connect(self.toggle_window)
        self.overlay_action = QAction("Show caption overlay", menu)
        self.overlay_action.triggered.connect(window.overlay_button.toggle)
        self.quit_action = QAction("Quit", menu)
        self.quit_action.triggered.connect(window.close)
        for action in (self.listen_action, self.window_action, self.overlay_action):
            menu.addAction(action)
        menu.addSeparator()
        menu.addAction(self.quit_action)
        self._menu = menu
        self.setContextMenu(menu)
        self.setToolTip("desktop-rt")
        self.activated.connect(self._activated)
        controller.listening_changed.connect(self._listening)
        window.overlay_button.toggled.connect(
            lambda on: self.overlay_action.setText(
                "Hide caption overlay" if on else "Show caption overlay"
            )
        )
        self._listening(controller.listening)
        if QSystemTrayIcon.isSystemTrayAvailable():
            self.show()

    def _listening(self, on: bool) -> None:
        self.listen_action.setText("Stop listening" if on else "Start listening")
        self.setIcon(self._icons[1] if on else self._icons[0])
        self.setToolTip("desktop-rt — listening" if on else "desktop-rt — not listening")

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

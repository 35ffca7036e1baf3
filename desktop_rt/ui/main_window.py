"""The main window: live captions, talk button and mode, level meter, status; history in a tab.

Widgets render what the controller's bridge emits and forward user actions to the controller;
they never merge text or write files.
"""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import QByteArray, QEvent, QObject, Qt, Signal
from PySide6.QtGui import QCloseEvent, QGuiApplication, QIcon, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QApplication,
    QButtonGroup,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from desktop_rt.config import HANDS_FREE, PUSH_TO_TALK, Settings
from desktop_rt.ui.bridge import ServerState
from desktop_rt.ui.controller import AppController
from desktop_rt.ui.shortcuts import TALK_KEY, help_text, make_action
from desktop_rt.ui.widgets.caption_view import CaptionView
from desktop_rt.ui.widgets.history_view import HistoryView
from desktop_rt.ui.widgets.level_meter import LevelMeter
from desktop_rt.ui.widgets.overlay import CaptionOverlay
from desktop_rt.ui.widgets.status_panel import StatusPanel

__all__ = ["MainWindow"]


class MainWindow(QMainWindow):
    """See the module docstring. ``closing`` is emitted when the user closes the window."""

    closing = Signal()

    def __init__(self, controller: AppController, icon: QIcon | None = None):
        super().__init__()
        self.controller = controller
        self.setWindowTitle("desktop-rt — live captions")
        if icon is not None:
            self.setWindowIcon(icon)
        settings = controller.settings
        self.captions = CaptionView(font_size=settings.captions.font_size)
        self.level_meter = LevelMeter(threshold=settings.vad.threshold)
        self.status_panel = StatusPanel()
        self.history = HistoryView(controller.history_path)
        self.overlay = CaptionOverlay(settings.overlay)
        self._build(settings)
        self._connect()
        self._apply_mode(settings.audio.mode)
        self._set_listening(controller.listening)
        if settings.window.geometry:
            self.restoreGeometry(QByteArray.fromHex(settings.window.geometry.encode()))
        else:
            self.resize(900, 640)
        app = QApplication.instance()
        if app is not None:
            app.installEventFilter(self)

    # ---- layout ------------------------------------------------------------------------------

    def _build(self, settings: Settings) -> None:
        live = QWidget()
        layout = QVBoxLayout(live)
        layout.setContentsMargins(10, 8, 10, 6)
        layout.addLayout(self._build_top(settings))
        layout.addWidget(self.captions, 1)
        layout.addLayout(self._build_bottom())
        self.tabs = QTabWidget()
        self.tabs.addTab(live, "Live")
        self.tabs.addTab(self.history, "History")
        central = QWidget()
        outer = QVBoxLayout(central)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        outer.addWidget(self.tabs, 1)
        outer.addWidget(self.status_panel)
        self.setCentralWidget(central)
        self._build_menus()

    def _build_top(self, settings: Settings) -> QHBoxLayout:
        """Listen button, mode switch, text size and overlay toggle."""
        top = QHBoxLayout()
        self.listen_button = QPushButton("● Start listening")
        self.listen_button.setObjectName("listenButton")
        self.listen_button.setCheckable(True)
        self.ptt_button = QPushButton("Push-to-talk")
        self.ptt_button.setObjectName("modeLeft")
        self.hf_button = QPushButton("Hands-free")
        self.hf_button.setObjectName("modeRight")
        self.mode_group = QButtonGroup(self)
        for button in (self.ptt_button, self.hf_button):
            button.setCheckable(True)
            self.mode_group.addButton(button)
        self.font_spin = QSpinBox()
        self.font_spin.setRange(10, 72)
        self.font_spin.setValue(settings.captions.font_size)
        self.font_spin.setSuffix(" pt")
        self.font_spin.setToolTip("Caption size (Ctrl+= / Ctrl+-)")
        self.overlay_button = QPushButton("Overlay")
        self.overlay_button.setCheckable(True)
        self.overlay_button.setChecked(settings.overlay.enabled)
        for widget in (self.listen_button, self.ptt_button, self.hf_button, self.overlay_button):
            widget.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        top.addWidget(self.listen_button)
        top.addSpacing(12)
        mode_row = QHBoxLayout()
        mode_row.setSpacing(0)
        mode_row.addWidget(self.ptt_button)
        mode_row.addWidget(self.hf_button)
        top.addLayout(mode_row)
        top.addStretch(1)
        top.addWidget(QLabel("Text size"))
        top.addWidget(self.font_spin)
        top.addWidget(self.overlay_button)
        return top

    def _build_bottom(self) -> QHBoxLayout:
        """The talk button and the level meter."""
        bottom = QHBoxLayout()
        self.talk_button = QPushButton("Hold to talk  (Space)")
        self.talk_button.setObjectName("talkButton")
        self.talk_button.setMinimumHeight(46)
        self.talk_button.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        meter_box = QVBoxLayout()
        meter_box.setSpacing(2)
        meter_title = QLabel("Microphone level, and voice (the line is the hands-free threshold)")
        meter_title.setStyleSheet("color: #7d8699; font-size: 11px;")
        self.speech_label = QLabel("")
        self.speech_label.setStyleSheet("color: #3b6fd8; font-size: 11px;")
        meter_box.addWidget(meter_title)
        meter_box.addWidget(self.level_meter)
        meter_box.addWidget(self.speech_label)
        bottom.addWidget(self.talk_button, 2)
        bottom.addSpacing(12)
        bottom.addLayout(meter_box, 3)
        return bottom

    def _build_menus(self) -> None:
        c = self.controller
        bar = self.menuBar()
        listen = bar.addMenu("&Listen")
        self.listen_action = make_action(
            self, "listen", "Start / stop listening", c.toggle_listening
        )
        listen.addAction(self.listen_action)
        listen.addAction(make_action(self, "mode", "Switch mode", self._toggle_mode))
        listen.addSeparator()
        listen.addAction(make_action(self, "quit", "Quit", self.close))
        view = bar.addMenu("&View")
        view.addAction(
            make_action(self, "live", "Live captions", lambda: self.tabs.setCurrentIndex(0))
        )
        view.addAction(
            make_action(self, "history", "History", lambda: self.tabs.setCurrentIndex(1))
        )
        view.addAction(make_action(self, "bigger", "Larger text", lambda: self.font_spin.stepBy(2)))
        view.addAction(
            make_action(self, "smaller", "Smaller text", lambda: self.font_spin.stepBy(-2))
        )
        self.overlay_action = make_action(
            self, "overlay", "Caption overlay", self.overlay_button.toggle
        )
        view.addAction(self.overlay_action)
        view.addAction(make_action(self, "copy_all", "Copy all captions", self.copy_all))
        tools = bar.addMenu("&Tools")
        tools.addAction(make_action(self, "models", "Models…", self.open_models))
        tools.addAction(make_action(self, "settings", "Settings…", self.open_settings))
        help_menu = bar.addMenu("&Help")
        help_menu.addAction(
            "Keyboard shortcuts",
            lambda: QMessageBox.information(self, "Keyboard shortcuts", help_text()),
        )
        help_menu.addAction("About desktop-rt", self.show_about)

    def about_text(self) -> str:
        from desktop_rt import __version__

        return (
            f"<b>desktop-rt {__version__}</b><br>Live speech-to-text that runs on this computer, "
            f"with an OpenAI-Realtime-compatible server for other programs."
        )

    def show_about(self) -> None:
        QMessageBox.about(self, "About desktop-rt", self.about_text())

    def _connect(self) -> None:
        c, b = self.controller, self.controller.bridge
        b.caption.connect(self.captions.show_turn)
        b.caption.connect(self.overlay.show_turn)
        b.level.connect(self.level_meter.set_reading)
        b.speech.connect(self._on_speech)
        b.error.connect(self.status_panel.show_message)
        b.mic_status.connect(self.status_panel.set_mic)
        b.server_state.connect(self._on_server_state)
        b.store_problem.connect(self._on_store_problem)
        b.session_closed.connect(self._on_session_closed)
        c.listening_changed.connect(self._set_listening)
        c.talking_changed.connect(self._set_talking)
        c.mode_changed.connect(self._apply_mode)
        c.clients_changed.connect(self.status_panel.set_clients)
        c.settings_changed.connect(self._on_settings)
        self.listen_button.clicked.connect(lambda: c.toggle_listening())
        self.ptt_button.clicked.connect(lambda: c.set_mode(PUSH_TO_TALK))
        self.hf_button.clicked.connect(lambda: c.set_mode(HANDS_FREE))
        self.talk_button.pressed.connect(c.talk_down)
        self.talk_button.released.connect(c.talk_up)
        self.font_spin.valueChanged.connect(self._font_changed)
        self.overlay_button.toggled.connect(self._overlay_toggled)
        self.overlay.moved.connect(self._overlay_moved)
        self.status_panel.set_server(c.server_state)
        if self.overlay_button.isChecked():
            self.overlay.show()

    # ---- rendering ---------------------------------------------------------------------------

    def _on_server_state(self, state: ServerState) -> None:
        self.status_panel.set_server(state)
        self.listen_button.setEnabled(state.state == "ready")

    def _on_speech(self, on: bool) -> None:
        self.speech_label.setText("hearing speech…" if on else "")

    def _on_session_closed(self, _uid: str) -> None:
        self.history.refresh()

    def _on_store_problem(self, message: str) -> None:
        if message:
            self.status_panel.show_message(message)
        else:
            self.status_panel.show_message("History is being saved again.", error=False)

    def _set_listening(self, on: bool) -> None:
        self.listen_button.setChecked(on)
        self.listen_button.setText("■ Stop listening" if on else "● Start listening")
        self.talk_button.setEnabled(on and self.controller.mode == PUSH_TO_TALK)
        if not on:
            self.level_meter.reset()
            self.status_panel.set_mic(None)

    def _set_talking(self, on: bool) -> None:
        self.talk_button.setProperty("talking", on)
        self.talk_button.setText("Talking… release to finish" if on else "Hold to talk  (Space)")
        self.talk_button.style().unpolish(self.talk_button)
        self.talk_button.style().polish(self.talk_button)

    def _apply_mode(self, mode: str) -> None:
        self.ptt_button.setChecked(mode == PUSH_TO_TALK)
        self.hf_button.setChecked(mode == HANDS_FREE)
        hands_free = mode == HANDS_FREE
        self.talk_button.setEnabled(not hands_free and self.controller.listening)
        self.talk_button.setText(
            "Hands-free: just speak" if hands_free else "Hold to talk  (Space)"
        )
        self.captions.setPlaceholderText(
            "Just speak: a pause ends each turn."
            if hands_free
            else "Hold Space or the Talk button, and speak."
        )

    def _on_settings(self, settings: Settings) -> None:
        self.level_meter.set_threshold(settings.vad.threshold)
        if self.font_spin.value() != settings.captions.font_size:
            self.font_spin.setValue(settings.captions.font_size)
        self.overlay.apply(settings.overlay)
        self.overlay_button.setChecked(settings.overlay.enabled)

    # ---- actions -----------------------------------------------------------------------------

    def _toggle_mode(self) -> None:
        c = self.controller
        c.set_mode(HANDS_FREE if c.mode == PUSH_TO_TALK else PUSH_TO_TALK)

    def _font_changed(self, size: int) -> None:
        self.captions.set_font_size(size)
        s = self.controller.settings
        if s.captions.font_size != size:
            self.controller.apply_settings(
                s.with_group(captions=replace(s.captions, font_size=size))
            )

    def _overlay_toggled(self, on: bool) -> None:
        self.overlay.setVisible(on)
        s = self.controller.settings
        if s.overlay.enabled != on:
            self.controller.apply_settings(s.with_group(overlay=replace(s.overlay, enabled=on)))

    def _overlay_moved(self, geometry: str) -> None:
        s = self.controller.settings
        self.controller.apply_settings(s.with_group(overlay=replace(s.overlay, geometry=geometry)))

    def copy_all(self) -> None:
        QGuiApplication.clipboard().setText(self.captions.committed_text())

    def open_settings(self) -> None:
        from desktop_rt.ui.dialogs.settings_dialog import SettingsDialog

        dialog = SettingsDialog(self.controller.settings, self)
        self.controller.bridge.level.connect(dialog.level_meter.set_reading)
        if dialog.exec():
            self.controller.apply_settings(dialog.result_settings())

    def open_models(self) -> None:
        from desktop_rt.ui.dialogs.models_dialog import ModelsDialog

        dialog = ModelsDialog(self.controller.settings, self)
        if dialog.exec():
            self.controller.apply_settings(dialog.result_settings())

    # ---- push-to-talk with the space bar -----------------------------------------------------

    def _typing(self) -> bool:
        focus = QApplication.focusWidget()
        if isinstance(focus, (QLineEdit, QPlainTextEdit, QAbstractSpinBox)):
            return True
        return isinstance(focus, QTextEdit) and not focus.isReadOnly()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt naming
        kind = event.type()
        if kind in (QEvent.Type.KeyPress, QEvent.Type.KeyRelease) and isinstance(event, QKeyEvent):
            if event.key() == TALK_KEY and self.isActiveWindow() and not self._typing():
                if event.isAutoRepeat():
                    return True
                if kind == QEvent.Type.KeyPress:
                    self.controller.talk_down()
                else:
                    self.controller.talk_up()
                return True
        elif kind == QEvent.Type.WindowDeactivate and watched is self:
            self.controller.talk_up()  # a release the window will never see
        return False

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 - for a press sent to the window itself
        if event.key() == TALK_KEY and not event.isAutoRepeat():
            self.controller.talk_down()
            return
        super().keyPressEvent(event)

    def keyReleaseEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        if event.key() == TALK_KEY and not event.isAutoRepeat():
            self.controller.talk_up()
            return
        super().keyReleaseEvent(event)

    # ---- closing -----------------------------------------------------------------------------

    def save_geometry(self) -> None:
        s = self.controller.settings
        geometry = self.saveGeometry().toHex().toStdString()
        self.controller.apply_settings(s.with_group(window=replace(s.window, geometry=geometry)))

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt naming
        app = QApplication.instance()
        if app is not None:
            app.removeEventFilter(self)
        self.save_geometry()
        self.overlay.close()
        self.history.close_store()
        self.closing.emit()
        super().closeEvent(event)

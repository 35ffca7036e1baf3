"""The main window: the Live tab (ui/live_page.py) and History in tabs, the status panel, menus.

Widgets render what the controller's bridge emits and forward user actions to the controller;
they never merge text or write files. An audio file dropped on the window, or chosen with File >
Import audio file…, is imported into the history (ui/file_import.py) with a progress row. Space
is the talk key while the Live tab's talk target has focus (ui/talk_key.py). While audio is
recorded the title bar and the History tab say so.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import QByteArray, QTimer, QUrl, Signal
from PySide6.QtGui import QCloseEvent, QDragEnterEvent, QDropEvent, QGuiApplication, QIcon
from PySide6.QtWidgets import (
    QFileDialog,
    QMainWindow,
    QMessageBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop_rt.config import HANDS_FREE, PUSH_TO_TALK, Settings
from desktop_rt.live.file_import import ImportResult
from desktop_rt.ui.bridge import ServerState
from desktop_rt.ui.caption_edits import connect_caption_edits
from desktop_rt.ui.caption_share import CaptionShareControl
from desktop_rt.ui.controller import AppController
from desktop_rt.ui.dictation import DictationAdapter
from desktop_rt.ui.file_import import AUDIO_FILTER
from desktop_rt.ui.live_page import LivePage, describe
from desktop_rt.ui.shortcuts import help_text, make_action
from desktop_rt.ui.talk_key import TalkKeyFilter, enable_detectable_auto_repeat
from desktop_rt.ui.theme import ThemeColors, ThemeManager
from desktop_rt.ui.widgets.history_view import HistoryView
from desktop_rt.ui.widgets.import_row import ImportRow
from desktop_rt.ui.widgets.overlay import CaptionOverlay
from desktop_rt.ui.widgets.status_panel import StatusPanel

__all__ = ["MainWindow", "TITLE"]

TITLE = "desktop-rt — live captions"


class MainWindow(QMainWindow):
    """See the module docstring. ``closing`` is emitted when the user closes the window."""

    closing = Signal()

    def __init__(self, controller: AppController, icon: QIcon | None = None):
        super().__init__()
        self.controller = controller
        self.setWindowTitle(TITLE)
        if icon is not None:
            self.setWindowIcon(icon)
        settings = controller.settings
        self.theme = ThemeManager(self)
        self.live = LivePage(settings)
        live = self.live
        self.captions, self.level_meter, self.speech_label = (
            live.captions,
            live.level_meter,
            live.speech_label,
        )
        self.listen_button, self.ptt_button, self.hf_button = (
            live.listen_button,
            live.ptt_button,
            live.hf_button,
        )
        self.font_spin, self.overlay_button, self.talk_button = (
            live.font_spin,
            live.overlay_button,
            live.talk_button,
        )
        self.status_panel = StatusPanel()
        self.history = HistoryView(controller.history_path)
        self.import_row = ImportRow()
        self.setAcceptDrops(True)  # an audio file dropped anywhere on the window is imported
        self.overlay = CaptionOverlay(settings.overlay)
        self.share = CaptionShareControl(controller, self)  # docs/design/captions_page.md
        self.closing.connect(self.share.shutdown)
        self.dictation = DictationAdapter(controller)  # docs/design/dictation.md
        self.closing.connect(self.dictation.shutdown)
        self._build()
        self._connect()
        self.theme.apply(settings.appearance.theme)
        self._on_settings(settings)
        live.set_mode(settings.audio.mode)
        live.set_listening(controller.listening)
        if settings.window.geometry:
            self.restoreGeometry(QByteArray.fromHex(settings.window.geometry.encode()))
        else:
            self.resize(900, 640)
        self.talk_key = TalkKeyFilter(
            self,
            self._is_talk_target,
            controller.talk_down,
            controller.talk_up,
            on_lost=lambda text: self.status_panel.show_message(text, error=False),
        )
        self.talk_key.install()  # on the window and its focus widget, not every event of the app
        self.detectable_auto_repeat = enable_detectable_auto_repeat()
        self.captions.setFocus()

    # ---- layout ------------------------------------------------------------------------------

    def _build(self) -> None:
        self.tabs = QTabWidget()
        self.tabs.addTab(self.live, "Live")
        self.tabs.addTab(self.history, "History")
        describe(self.tabs, "Views", "Live captions (Ctrl+1) or the saved history (Ctrl+2).")
        describe(
            self.tabs.tabBar(), "Views", "Live captions (Ctrl+1) or the saved history (Ctrl+2)."
        )
        central = QWidget()
        outer = QVBoxLayout(central)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(0)
        outer.addWidget(self.tabs, 1)
        outer.addWidget(self.import_row)
        outer.addWidget(self.status_panel)
        self.setCentralWidget(central)
        self._build_menus()

    def _build_menus(self) -> None:
        c = self.controller
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self.import_action = make_action(
            self, "import", "Import audio file…", self.choose_import_file
        )
        file_menu.addAction(self.import_action)
        listen = bar.addMenu("&Listen")
        self.listen_action = make_action(
            self, "listen", "Start / stop listening", c.toggle_listening
        )
        listen.addAction(self.listen_action)
        listen.addAction(make_action(self, "mode", "Switch mode", self._toggle_mode))
        listen.addAction("Retry microphone", c.retry_microphone)
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
        self.share_action = make_action(
            self, "share", "Share captions…", lambda: self.share.open_dialog(self)
        )
        tools.addAction(self.share_action)
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
        c, b, live = self.controller, self.controller.bridge, self.live
        b.caption.connect(self.captions.show_turn)
        b.caption.connect(self.overlay.show_turn)
        connect_caption_edits(c, self.captions, self.history, self.overlay)  # issue 18
        b.level.connect(self.level_meter.set_reading)
        b.speech.connect(live.set_speech)
        b.error.connect(self.status_panel.show_message)
        b.mic_status.connect(self.status_panel.set_mic)
        b.model_repair.connect(self.status_panel.show_repair)
        b.server_state.connect(self._on_server_state)
        b.store_problem.connect(self._on_store_problem)
        b.session_closed.connect(lambda _uid: self.history.refresh())
        imports = c.importer
        imports.started.connect(self.import_row.begin)
        imports.progress.connect(self.import_row.update_progress)
        imports.finished.connect(self._imported)
        imports.failed.connect(self._import_failed)
        imports.cancelled.connect(self._import_cancelled)
        self.import_row.cancel.connect(imports.cancel)
        c.listening_changed.connect(self._set_listening)
        c.talking_changed.connect(live.set_talking)
        c.recording_changed.connect(self._set_recording)
        c.mode_changed.connect(live.set_mode)
        c.clients_changed.connect(self.status_panel.set_clients)
        self._lag_timer = QTimer(self, interval=1000)  # "captions N s behind" (issue 15)
        self._lag_timer.timeout.connect(self._show_lag)
        self._lag_timer.start()
        c.settings_changed.connect(self._on_settings)
        self.status_panel.retry.connect(self._retry)
        self.listen_button.clicked.connect(lambda: c.toggle_listening())
        self.ptt_button.clicked.connect(lambda: self._choose_mode(PUSH_TO_TALK))
        self.hf_button.clicked.connect(lambda: self._choose_mode(HANDS_FREE))
        self.talk_button.pressed.connect(c.talk_down)
        self.talk_button.released.connect(c.talk_up)
        self.font_spin.valueChanged.connect(self._font_changed)
        self.overlay_button.toggled.connect(self._overlay_toggled)
        self.overlay.moved.connect(self._overlay_moved)
        self.theme.changed.connect(self._on_theme)
        self._on_server_state(c.server_state)
        if self.overlay_button.isChecked():
            self.overlay.show()

    # ---- rendering ---------------------------------------------------------------------------

    def _show_lag(self) -> None:
        live = self.controller.live
        self.status_panel.set_lag(live.lag_seconds if live is not None else 0.0)

    def _is_talk_target(self, widget: QWidget | None) -> bool:
        if self.tabs.currentWidget() is not self.live:
            return False
        return widget is self or widget is self.tabs.tabBar() or self.live.is_talk_target(widget)

    def _on_server_state(self, state: ServerState) -> None:
        self.status_panel.set_server(state)
        self.live.set_server(state)

    def _on_store_problem(self, message: str) -> None:
        if message:
            self.status_panel.show_message(message)
        else:
            self.status_panel.show_message("History is being saved again.", error=False)

    def _set_listening(self, on: bool) -> None:
        self.live.set_listening(on)
        if not on:
            self.status_panel.set_mic(None)

    def _set_recording(self, on: bool) -> None:
        self.setWindowTitle(f"● Recording — {TITLE}" if on else TITLE)
        index = self.tabs.indexOf(self.history)
        self.tabs.setTabText(index, "History  ● Recording" if on else "History")
        self.tabs.setTabToolTip(index, "Audio is being recorded now" if on else "")

    def _retry(self) -> None:
        self.status_panel.show_message("Reopening the microphone…", error=False, mic=True)
        self.controller.retry_microphone()

    def _on_settings(self, settings: Settings) -> None:
        self.level_meter.set_threshold(settings.vad.threshold)
        if self.font_spin.value() != settings.captions.font_size:
            self.font_spin.setValue(settings.captions.font_size)
        if settings.appearance.theme != self.theme.theme:
            self.theme.apply(settings.appearance.theme)
        self.captions.set_font_family(settings.appearance.font_family)
        self.overlay.set_font_family(settings.appearance.font_family)
        self.overlay.apply(settings.overlay)
        self.overlay_button.setChecked(settings.overlay.enabled)

    def _on_theme(self, colors: ThemeColors) -> None:
        self.overlay.set_colors(colors)
        self.captions.restyle()

    # ---- actions -----------------------------------------------------------------------------

    def _choose_mode(self, mode: str) -> None:
        self.controller.set_mode(mode)
        self.live.set_mode(self.controller.mode)  # a click on the checked one unchecked it

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
        dialog.deleteLater()

    def open_models(self) -> None:
        from desktop_rt.ui.dialogs.models_dialog import ModelsDialog

        dialog = ModelsDialog(self.controller.settings, self)
        if dialog.exec():
            self.controller.apply_settings(dialog.result_settings())
        dialog.deleteLater()

    # ---- importing files ---------------------------------------------------------------------

    def choose_import_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Import audio file", "", AUDIO_FILTER)
        if path:
            self.import_file(path)

    def import_file(self, path: str | Path) -> bool:
        """Import ``path`` into the history (one file at a time); False when it did not start."""
        return self.controller.importer.start(path)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt naming
        if _local_files(event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt naming
        files = _local_files(event.mimeData().urls())
        if not files:
            return
        event.acceptProposedAction()
        if self.import_file(files[0]) and len(files) > 1:
            self.status_panel.show_message(
                f"One file at a time: importing {Path(files[0]).name}; drop the others after it."
            )

    def _imported(self, result: ImportResult) -> None:
        self.import_row.end()
        minutes, seconds = divmod(int(result.seconds), 60)
        if result.partial or result.warnings:
            note = "; ".join(result.warnings)
            self.status_panel.show_message(f"Imported {result.name} with problems: {note}.")
        else:
            self.status_panel.show_message(
                f"Imported {result.name} ({minutes}:{seconds:02d}) into the history.", error=False
            )
        self.tabs.setCurrentWidget(self.history)
        if result.session_id is not None:
            self.history.show_session(result.session_id)
        else:
            self.history.refresh()

    def _import_failed(self, message: str) -> None:
        if not self.controller.importer.busy:
            self.import_row.end()
        self.status_panel.show_message(message)

    def _import_cancelled(self, name: str) -> None:
        self.import_row.end()
        self.status_panel.show_message(f"The import of {name} was cancelled.", error=False)

    # ---- closing -----------------------------------------------------------------------------

    def save_geometry(self) -> None:
        s = self.controller.settings
        geometry = self.saveGeometry().toHex().toStdString()
        self.controller.apply_settings(s.with_group(window=replace(s.window, geometry=geometry)))

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt naming
        self.talk_key.uninstall()
        self.talk_key.cancel()
        self.save_geometry()
        self.overlay.close()
        self.history.close_store()
        self.closing.emit()
        super().closeEvent(event)


def _local_files(urls: list[QUrl]) -> list[str]:
    return [url.toLocalFile() for url in urls if url.isLocalFile() and url.toLocalFile()]

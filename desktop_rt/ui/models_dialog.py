"""Models: the embedded model and local model folders, with size and state; pick the captions
model and language; add or remove a local folder.

Downloading models (with progress and cancel) is not here yet: the button says so. Adding a
folder checks it is a CTranslate2 Whisper model; using another model restarts the server.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout, QHeaderView, QLabel, QMessageBox,
    QPushButton, QTableWidget, QTableWidgetItem, QVBoxLayout,
)

from desktop_rt.config import Settings
from desktop_rt.engine.models import DEFAULT_MODEL_ID, EMBEDDED_WHISPER_BASE, check_ctranslate2_dir
from desktop_rt.errors import ModelError
from desktop_rt.paths import models_dir
from desktop_rt.ui.settings_dialog import language_combo

__all__ = ["ModelEntry", "model_entries", "ModelsDialog"]


@dataclass(frozen=True)
class ModelEntry:
    spec: str  # what settings store: the embedded id or a folder path
    name: str
    kind: str
    size: int
    state: str
    usable: bool


def _folder_size(folder: Path) -> int:
    try:
        return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    except OSError:
        return 0


def model_entries(settings: Settings) -> list[ModelEntry]:
    embedded = models_dir() / DEFAULT_MODEL_ID
    binary = embedded / "model.bin"
    installed = binary.is_file() and binary.stat().st_size == EMBEDDED_WHISPER_BASE.size
    entries = [ModelEntry(
        DEFAULT_MODEL_ID, "Whisper base (embedded)", "faster-whisper", EMBEDDED_WHISPER_BASE.size,
        "installed" if installed else "assembled from its packages on first use", True,
    )]
    for folder in settings.transcription.model_folders:
        path = Path(folder)
        try:
            check_ctranslate2_dir(path)
            state, usable = "ready", True
        except ModelError as exc:
            state, usable = str(exc), False
        entries.append(ModelEntry(str(path), path.name, "local folder", _folder_size(path), state, usable))
    return entries


def _size(n: int) -> str:
    return f"{n / 1e6:.0f} MB" if n else "—"


class ModelsDialog(QDialog):
    def __init__(self, settings: Settings, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Models")
        self.resize(760, 360)
        self._settings = settings
        self._chosen = settings.transcription.model_id
        layout = QVBoxLayout(self)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["Model", "Kind", "Size", "State"])
        self.table.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        layout.addWidget(self.table, 1)
        row = QHBoxLayout()
        self.use_button = QPushButton("Use for captions")
        self.add_button = QPushButton("Add local folder…")
        self.remove_button = QPushButton("Remove from list")
        self.download_button = QPushButton("Download…")
        self.download_button.setEnabled(False)
        self.download_button.setToolTip("Downloading models is not available yet; add a local folder instead.")
        for button in (self.use_button, self.add_button, self.remove_button, self.download_button):
            row.addWidget(button)
        row.addStretch(1)
        layout.addLayout(row)
        form = QFormLayout()
        self.language = language_combo(settings.transcription.language)
        form.addRow("Caption language", self.language)
        self.note = QLabel("Changing the model restarts the embedded server (a few seconds).")
        self.note.setStyleSheet("color: palette(mid);")
        form.addRow(self.note)
        layout.addLayout(form)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.use_button.clicked.connect(self._use_selected)
        self.add_button.clicked.connect(self._add_dialog)
        self.remove_button.clicked.connect(self._remove_selected)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self._fill()

    @property
    def chosen(self) -> str:
        return self._chosen

    def _fill(self) -> None:
        self._entries = model_entries(self._settings)
        self.table.setRowCount(len(self._entries))
        for r, entry in enumerate(self._entries):
            mark = "✓ " if entry.spec == self._chosen else ""
            cells = [mark + entry.name, entry.kind, _size(entry.size), entry.state]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(entry.spec if c == 0 else text)
                if not entry.usable:
                    item.setForeground(Qt.GlobalColor.darkRed)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        self._selection_changed()

    def _selected(self) -> ModelEntry | None:
        rows = self.table.selectionModel().selectedRows()
        return self._entries[rows[0].row()] if rows else None

    def _selection_changed(self) -> None:
        entry = self._selected()
        self.use_button.setEnabled(entry is not None and entry.usable and entry.spec != self._chosen)
        self.remove_button.setEnabled(entry is not None and entry.spec != DEFAULT_MODEL_ID)

    def add_folder(self, folder: str | Path) -> None:
        """Add a local CTranslate2 Whisper folder (raises :class:`ModelError` if it is not one)."""
        path = Path(folder).expanduser().resolve()
        check_ctranslate2_dir(path)
        folders = self._settings.transcription.model_folders
        if str(path) not in folders:
            self._settings = self._settings.with_group(
                transcription=replace(self._settings.transcription, model_folders=folders + (str(path),)))
        self._fill()

    def use(self, spec: str) -> None:
        self._chosen = spec
        self._fill()

    def _use_selected(self) -> None:
        entry = self._selected()
        if entry is not None and entry.usable:
            self.use(entry.spec)

    def _add_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Choose a CTranslate2 Whisper model folder")
        if folder:
            try:
                self.add_folder(folder)
            except ModelError as exc:
                QMessageBox.warning(self, "Not a model folder", str(exc))

    def _remove_selected(self) -> None:
        entry = self._selected()
        if entry is None or entry.spec == DEFAULT_MODEL_ID:
            return
        t = self._settings.transcription
        self._settings = self._settings.with_group(
            transcription=replace(t, model_folders=tuple(f for f in t.model_folders if f != entry.spec)))
        if self._chosen == entry.spec:
            self._chosen = DEFAULT_MODEL_ID
        self._fill()

    def result_settings(self) -> Settings:
        t = self._settings.transcription
        return self._settings.with_group(
            transcription=replace(t, model_id=self._chosen, language=self.language.currentData()))

"""Models: the router's models file (``models.toml``) with size and state; add a local model,
download one (progress bar, cancel), remove one; pick the captions model and language.

The list is :func:`load_models_file` (the embedded default always first), one
:class:`~desktop_rt.engine.models.kind_protocol.EntryReport` per entry (the same report as
``desktop-rt models list``). Adding and removing write the models file at once. Downloads run
on a :class:`~desktop_rt.ui.dialogs.model_download.DownloadWorker`. The captions model and
language go to the settings the caller saves (:meth:`ModelsDialog.result_settings`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, Signal, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop_rt.config import Settings
from desktop_rt.engine.models.catalogue import (
    ModelEntry,
    ModelsConfig,
    ModelsFileError,
    ModelSource,
    load_models_file,
    new_model_id,
    save_models_file,
)
from desktop_rt.engine.models.embedded import DEFAULT_MODEL_ID
from desktop_rt.engine.models.kinds import (
    EntryReport,
    entry_report,
    kind_for_download,
    local_entry,
)
from desktop_rt.errors import ModelError
from desktop_rt.ui.dialogs.model_download import (
    DownloadBar,
    DownloadCancelled,
    DownloadFn,
    hub_download,
)
from desktop_rt.ui.dialogs.model_prompts import ask_local_model, ask_repository
from desktop_rt.ui.dialogs.settings_dialog import language_combo

__all__ = [
    "model_reports",
    "ModelsDialog",
    "DownloadCancelled",
    "DownloadFn",
    "hub_download",
]


def model_reports(config: ModelsConfig) -> list[EntryReport]:
    return [entry_report(e) for e in config.entries]


def _kind_text(report: EntryReport) -> str:
    return f"{report.entry.backend} (embedded)" if report.entry.embedded else report.entry.backend


def _state_text(report: EntryReport) -> str:
    return (
        f"{report.state} (API clients only)"
        if report.ready and not report.captions
        else report.state
    )


def _size(n: int) -> str:
    return f"{n / 1e6:.0f} MB" if n else "—"


def _new_id(path: Path, taken: tuple[str, ...]) -> str:
    return new_model_id(path.stem if path.is_file() else path.name, taken)


def _name(widget: QWidget, text: str, description: str) -> None:
    """Label ``widget`` (a button gets ``text`` with its mnemonic) for keyboard and screen readers."""
    if isinstance(widget, QPushButton):
        widget.setText(text)
    widget.setAccessibleName(text.replace("&", "").rstrip("…"))
    widget.setAccessibleDescription(description)


class ModelsDialog(QDialog):
    download_done = Signal(str)  # model id, once it is in the models file
    download_failed = Signal(str)
    download_cancelled = Signal()

    def __init__(
        self,
        settings: Settings,
        parent: QWidget | None = None,
        *,
        models_path: Path | None = None,
        download_fn: DownloadFn = hub_download,
    ):
        super().__init__(parent)
        self.setWindowTitle("Models")
        self.resize(820, 400)
        self._settings = settings
        self._models_path = models_path
        self._download_fn = download_fn
        self._chosen = settings.transcription.model_id
        self._download_id = ""
        self._download_repo = ""
        self._entries: list[EntryReport] = []
        self.confirm: Callable[[str], bool] = self._ask
        """Asks before removing (returns True to go on); replaceable."""
        layout = QVBoxLayout(self)
        layout.addWidget(self._build_table(), 1)
        layout.addLayout(self._build_buttons())
        layout.addLayout(self._build_progress())
        self.message = QLabel("")
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        layout.addLayout(self._build_form(settings))
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.close_button = buttons.button(QDialogButtonBox.StandardButton.Cancel)
        _name(self.ok_button, "&OK", "Keep the chosen captions model and language")
        _name(self.close_button, "&Cancel", "Close without changing the captions model")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self._config = ModelsConfig()
        self.reload()

    def _build_table(self) -> QWidget:
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        self.table = QTableWidget(0, 5)
        heading = QLabel("&Models")
        heading.setBuddy(self.table)
        column.addWidget(heading)
        column.addWidget(self.table, 1)
        _name(self.table, "Models", "The models this app and its server can use; ✓ marks captions")
        self.table.setHorizontalHeaderLabels(["Model", "Kind", "Size", "State", "Location"])
        self.table.horizontalHeader().setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setTabKeyNavigation(False)  # arrows move between rows; Tab leaves the table
        self.table.itemSelectionChanged.connect(self._selection_changed)
        return box

    def _build_buttons(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.use_button = QPushButton()
        self.add_button = QPushButton()
        self.download_button = QPushButton()
        self.remove_button = QPushButton()
        for button, text, description in (
            (self.use_button, "&Use for captions", "Show live captions with the selected model"),
            (self.add_button, "&Add local file/folder…", "Add a model folder or GGUF file"),
            (self.download_button, "&Download…", "Download a Whisper model from Hugging Face"),
            (self.remove_button, "&Remove…", "Remove the selected model from the list"),
        ):
            _name(button, text, description)
            row.addWidget(button)
        row.addStretch(1)
        self.use_button.clicked.connect(self._use_selected)
        self.add_button.clicked.connect(self._add_dialog)
        self.download_button.clicked.connect(self._download_dialog)
        self.remove_button.clicked.connect(self._remove_selected)
        return row

    def _build_progress(self) -> QHBoxLayout:
        self.downloads = DownloadBar(self)
        self.progress, self.cancel_button = self.downloads.progress, self.downloads.cancel_button
        self.downloads.finished.connect(self._on_finished)
        self.downloads.failed.connect(self._on_failed)
        self.downloads.cancelled.connect(self._on_cancelled)
        self.downloads.idle.connect(self._download_idle)
        return self.downloads.row

    def _build_form(self, settings: Settings) -> QFormLayout:
        form = QFormLayout()
        self.language = language_combo(settings.transcription.language)
        label = QLabel("Caption &language")
        label.setBuddy(self.language)
        _name(self.language, "Caption language", "The language spoken (auto-detect or fixed)")
        form.addRow(label, self.language)
        note = QLabel("Changing the captions model restarts the embedded server (a few seconds).")
        note.setStyleSheet("color: palette(mid);")
        form.addRow(note)
        return form

    # ---- reading -----------------------------------------------------------------------------

    @property
    def chosen(self) -> str:
        return self._chosen

    @property
    def config(self) -> ModelsConfig:
        return self._config

    @property
    def entries(self) -> list[EntryReport]:
        return list(self._entries)

    @property
    def downloading(self) -> bool:
        return self.downloads.busy

    def reload(self) -> None:
        try:
            self._config = load_models_file(self._models_path)
        except ModelsFileError as exc:
            self._config = ModelsConfig()
            self.message.setText(f"The models file could not be read: {exc}")
        self._fill()

    def _fill(self) -> None:
        self._entries = model_reports(self._config)
        self.table.setRowCount(len(self._entries))
        for r, report in enumerate(self._entries):
            mark = "✓ " if report.spec == self._chosen else ""
            cells = [
                mark + report.id,
                _kind_text(report),
                _size(report.size),
                _state_text(report),
                report.location,
            ]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if not report.ready:
                    item.setForeground(Qt.GlobalColor.darkRed)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        self._selection_changed()

    def _selected(self) -> EntryReport | None:
        rows = self.table.selectionModel().selectedRows()
        return self._entries[rows[0].row()] if rows else None

    def _selection_changed(self) -> None:
        report = self._selected()
        self.use_button.setEnabled(
            report is not None and report.captions and report.spec != self._chosen
        )
        self.remove_button.setEnabled(
            report is not None and report.id != DEFAULT_MODEL_ID and not self.downloading
        )

    def _save(self, config: ModelsConfig) -> None:
        save_models_file(config, self._models_path)
        self.reload()

    # ---- add / remove / use ------------------------------------------------------------------

    def add_local(
        self, path: str | Path, mmproj: str | Path | None = None, model_id: str | None = None
    ) -> str:
        """Add a Whisper folder or a GGUF file (with its mmproj) to the models file; its id."""
        path = Path(path).expanduser().resolve()
        projector = Path(mmproj).expanduser().resolve() if mmproj is not None else None
        model_id = model_id or _new_id(path, self._config.ids)
        self._save(self._config.with_entry(local_entry(model_id, path, projector)))
        self.message.setText(f"Added {model_id}.")
        return model_id

    def remove(self, model_id: str) -> bool:
        """Remove ``model_id`` from the models file, after asking; True if removed."""
        if not self.confirm(f"Remove “{model_id}” from the models list? Its files stay on disk."):
            return False
        report = next((r for r in self._entries if r.id == model_id), None)
        self._save(self._config.without(model_id))
        if report is not None and self._chosen == report.spec:
            self._chosen = DEFAULT_MODEL_ID
            self._fill()
        return True

    def use(self, spec: str) -> None:
        self._chosen = spec
        self._fill()

    def _ask(self, text: str) -> bool:
        answer = QMessageBox.question(self, "Remove model", text)
        return answer == QMessageBox.StandardButton.Yes

    def _use_selected(self) -> None:
        report = self._selected()
        if report is not None and report.captions:
            self.use(report.spec)

    def _remove_selected(self) -> None:
        report = self._selected()
        if report is not None and report.id != DEFAULT_MODEL_ID:
            self.remove(report.id)

    def _add_dialog(self) -> None:
        chosen = ask_local_model(self)
        if chosen is None:
            return
        try:
            self.add_local(*chosen)
        except (ModelError, ModelsFileError) as exc:
            QMessageBox.warning(self, "Cannot add this model", str(exc))

    # ---- download ----------------------------------------------------------------------------

    def start_download(self, repo: str, model_id: str | None = None) -> None:
        """Fetch ``repo`` on a worker thread; progress shows here, the result lands in the models file."""
        if self.downloading:
            return
        self._download_id = model_id or _new_id(Path(repo.split("/")[-1]), self._config.ids)
        self._download_repo = repo
        self.download_button.setEnabled(False)
        self.message.setText("")
        self.downloads.start(self._download_fn, repo, self._download_id)

    def cancel_download(self) -> None:
        self.downloads.cancel()

    @Slot(str)
    def _on_finished(self, folder: str) -> None:
        try:
            path = Path(folder)
            names = sorted(p.name for p in path.iterdir() if p.is_file())
            kind = kind_for_download(path, names)
            model_path, mmproj = kind.download_paths(path, names)
            entry = ModelEntry(
                self._download_id,
                kind.name,
                model_path,
                mmproj,
                source=ModelSource(self._download_repo),
            )
            self._save(self._config.with_entry(entry))
        except (ModelsFileError, OSError) as exc:
            self._on_failed(str(exc))
            return
        self.message.setText(f"Downloaded {self._download_id}.")
        self.download_done.emit(self._download_id)

    @Slot(str)
    def _on_failed(self, message: str) -> None:
        self.message.setText(f"The download failed: {message}")
        self.download_failed.emit(message)

    @Slot()
    def _on_cancelled(self) -> None:
        self.message.setText("Download cancelled.")
        self.download_cancelled.emit()

    @Slot()
    def _download_idle(self) -> None:
        self.download_button.setEnabled(True)
        self._selection_changed()

    def _download_dialog(self) -> None:
        repo = ask_repository(self)
        if repo is not None:
            self.start_download(repo)

    def done(self, result: int) -> None:  # noqa: D401 - QDialog API: closing cancels a download
        self.downloads.stop()
        super().done(result)

    # ---- result ------------------------------------------------------------------------------

    def result_settings(self) -> Settings:
        t = self._settings.transcription
        return self._settings.with_group(
            transcription=replace(t, model_id=self._chosen, language=self.language.currentData())
        )

"""Models: the router's models file (``models.toml``) with size and state; add a local model,
download one (progress bar, cancel), remove one; pick the captions model and language.

The list is :func:`load_models_file` (the embedded default always first). Adding and removing
write the models file at once (:func:`save_models_file`). Downloads run on a worker
:class:`QThread` through a *download function* (default: :func:`download_model` from the hub);
tests inject another with the same signature. The captions model and language go to the
settings the caller saves (:meth:`ModelsDialog.result_settings`); captions run on Whisper models
(the embedded one or a local CTranslate2 folder); GGUF and command models serve API clients.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from PySide6.QtCore import QObject, Qt, QThread, Signal, Slot
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QInputDialog,
    QLabel,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from desktop_rt.config import Settings
from desktop_rt.engine.asr.ct2_folder import check_ctranslate2_dir
from desktop_rt.engine.models.catalogue import (
    ModelEntry as FileEntry,
)
from desktop_rt.engine.models.catalogue import (
    ModelsConfig,
    ModelsFileError,
    ModelSource,
    load_models_file,
    save_models_file,
)
from desktop_rt.engine.models.embedded import DEFAULT_MODEL_ID, EMBEDDED_WHISPER_BASE
from desktop_rt.errors import DesktopRtError, ModelError
from desktop_rt.paths import models_dir
from desktop_rt.ui.dialogs.settings_dialog import language_combo

__all__ = [
    "ModelEntry",
    "model_entries",
    "ModelsDialog",
    "DownloadCancelled",
    "DownloadFn",
    "hub_download",
]

Progress = Callable[[str, int, "int | None"], None]
DownloadFn = Callable[[str, str, Progress, Callable[[], bool]], Path]
"""``(repo, model_id, progress(file, done, total), cancelled()) -> installed folder``."""


class DownloadCancelled(Exception):
    """Raised inside a download function when ``cancelled()`` turned true."""


def hub_download(
    repo: str, model_id: str, progress: Progress, cancelled: Callable[[], bool]
) -> Path:
    """The default download function: :func:`download_model` with a progress bar that can cancel."""
    from desktop_rt.engine.models.downloads import download_model, progress_tqdm

    def report(name: str, done: int, total: int | None) -> None:
        if cancelled():
            raise DownloadCancelled()
        progress(name, done, total)

    folder, _hashes = download_model(repo, model_id, tqdm_class=progress_tqdm(report))
    return folder


@dataclass(frozen=True)
class ModelEntry:
    spec: str  # what settings store for captions: the embedded id or a Whisper folder path
    id: str
    kind: str
    size: int
    state: str
    usable: bool  # for captions
    location: str = ""


def _path_size(path: Path) -> int:
    try:
        if path.is_file():
            return path.stat().st_size
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    except OSError:
        return 0


def _entry_row(entry: FileEntry) -> ModelEntry:
    if entry.embedded:
        binary = models_dir() / DEFAULT_MODEL_ID / "model.bin"
        installed = binary.is_file() and binary.stat().st_size == EMBEDDED_WHISPER_BASE.size
        return ModelEntry(
            DEFAULT_MODEL_ID,
            entry.id,
            "whisper (embedded)",
            EMBEDDED_WHISPER_BASE.size,
            "installed" if installed else "assembled from its packages on first use",
            True,
            entry.location,
        )
    if entry.backend == "command":
        return ModelEntry(
            entry.cmd or "",
            entry.id,
            "command",
            0,
            "external server (API clients only)",
            False,
            entry.location,
        )
    paths = [Path(p) for p in (entry.model_path, entry.mmproj) if p]
    missing = [p for p in paths if not p.exists()]
    size = sum(_path_size(p) for p in paths)
    if missing:
        state, usable = f"missing: {missing[0]}", False
    elif entry.backend == "whisper":
        try:
            check_ctranslate2_dir(Path(entry.model_path))
            state, usable = "ready", True
        except ModelError as exc:
            state, usable = str(exc), False
    else:
        state, usable = "ready (API clients only)", False
    return ModelEntry(
        entry.model_path or "", entry.id, entry.backend, size, state, usable, entry.location
    )


def model_entries(config: ModelsConfig) -> list[ModelEntry]:
    return [_entry_row(e) for e in config.entries]


def _size(n: int) -> str:
    return f"{n / 1e6:.0f} MB" if n else "—"


def _new_id(path: Path, taken: tuple[str, ...]) -> str:
    base = (
        re.sub(r"[^A-Za-z0-9._:-]+", "-", path.stem if path.is_file() else path.name).strip("-.")
        or "model"
    )
    base = base[:100]
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


class DownloadWorker(QObject):
    """Runs a download function on its own thread; every result leaves by a signal."""

    progress = Signal(str, int, int)  # file, bytes done, total (-1: unknown)
    finished = Signal(str)  # installed folder
    failed = Signal(str)
    cancelled = Signal()

    def __init__(self, fn: DownloadFn, repo: str, model_id: str):
        super().__init__()
        self._fn, self._repo, self._model_id = fn, repo, model_id
        self._cancel = False

    def cancel(self) -> None:  # called from the UI thread; read by the download thread
        self._cancel = True

    @Slot()
    def run(self) -> None:
        try:
            folder = self._fn(
                self._repo,
                self._model_id,
                lambda name, done, total: self.progress.emit(
                    name, int(done), -1 if total is None else int(total)
                ),
                lambda: self._cancel,
            )
        except DownloadCancelled:
            self.cancelled.emit()
        except (DesktopRtError, OSError, ValueError, RuntimeError) as exc:
            self.failed.emit(str(exc) or type(exc).__name__)
        else:
            if self._cancel:
                self.cancelled.emit()
            else:
                self.finished.emit(str(folder))


class ModelsDialog(QDialog):
    download_done = Signal(str)  # model id, once it is in the models file
    download_failed = Signal(str)
    download_cancelled = Signal()

    def __init__(
        self,
        settings: Settings,
        parent=None,
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
        self._thread: QThread | None = None
        self._worker: DownloadWorker | None = None
        self._download_id = ""
        self.confirm: Callable[[str], bool] = self._ask
        """Asks before removing (returns True to go on); replaceable."""
        layout = QVBoxLayout(self)
        self.table = QTableWidget(0, 5)
        self.table.setHorizontalHeaderLabels(["Model", "Kind", "Size", "State", "Location"])
        self.table.horizontalHeader().setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        layout.addWidget(self.table, 1)
        row = QHBoxLayout()
        self.use_button = QPushButton("Use for captions")
        self.add_button = QPushButton("Add local file/folder…")
        self.download_button = QPushButton("Download…")
        self.remove_button = QPushButton("Remove…")
        for button in (self.use_button, self.add_button, self.download_button, self.remove_button):
            row.addWidget(button)
        row.addStretch(1)
        layout.addLayout(row)
        progress_row = QHBoxLayout()
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.cancel_button = QPushButton("Cancel download")
        progress_row.addWidget(self.progress, 1)
        progress_row.addWidget(self.cancel_button)
        layout.addLayout(progress_row)
        self.progress.hide()
        self.cancel_button.hide()
        self.message = QLabel("")
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        form = QFormLayout()
        self.language = language_combo(settings.transcription.language)
        form.addRow("Caption language", self.language)
        note = QLabel("Changing the captions model restarts the embedded server (a few seconds).")
        note.setStyleSheet("color: palette(mid);")
        form.addRow(note)
        layout.addLayout(form)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.use_button.clicked.connect(self._use_selected)
        self.add_button.clicked.connect(self._add_dialog)
        self.download_button.clicked.connect(self._download_dialog)
        self.remove_button.clicked.connect(self._remove_selected)
        self.cancel_button.clicked.connect(self.cancel_download)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self._config = ModelsConfig()
        self.reload()

    # ---- reading -----------------------------------------------------------------------------

    @property
    def chosen(self) -> str:
        return self._chosen

    @property
    def config(self) -> ModelsConfig:
        return self._config

    @property
    def entries(self) -> list[ModelEntry]:
        return list(self._entries)

    @property
    def downloading(self) -> bool:
        return self._thread is not None

    def reload(self) -> None:
        try:
            self._config = load_models_file(self._models_path)
        except ModelsFileError as exc:
            self._config = ModelsConfig()
            self.message.setText(f"The models file could not be read: {exc}")
        self._fill()

    def _fill(self) -> None:
        self._entries = model_entries(self._config)
        self.table.setRowCount(len(self._entries))
        for r, entry in enumerate(self._entries):
            mark = "✓ " if entry.spec == self._chosen else ""
            cells = [mark + entry.id, entry.kind, _size(entry.size), entry.state, entry.location]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                if entry.state.startswith("missing") or (
                    entry.kind == "whisper" and not entry.usable
                ):
                    item.setForeground(Qt.GlobalColor.darkRed)
                self.table.setItem(r, c, item)
        self.table.resizeColumnsToContents()
        self._selection_changed()

    def _selected(self) -> ModelEntry | None:
        rows = self.table.selectionModel().selectedRows()
        return self._entries[rows[0].row()] if rows else None

    def _selection_changed(self) -> None:
        entry = self._selected()
        self.use_button.setEnabled(
            entry is not None and entry.usable and entry.spec != self._chosen
        )
        self.remove_button.setEnabled(
            entry is not None and entry.id != DEFAULT_MODEL_ID and not self.downloading
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
        if path.is_dir():
            check_ctranslate2_dir(path)
            backend, mm = "whisper", None
        elif path.is_file() and path.suffix.lower() == ".gguf":
            if mmproj is None:
                raise ModelsFileError(
                    f"{path.name} is a GGUF model: it needs its audio projector (mmproj) file too."
                )
            mm = Path(mmproj).expanduser().resolve()
            if not mm.is_file():
                raise ModelsFileError(f"The mmproj file {mm} does not exist.")
            backend = "llama"
        else:
            raise ModelsFileError(
                f"{path} is neither a CTranslate2 Whisper folder nor a .gguf file."
            )
        model_id = model_id or _new_id(path, self._config.ids)
        self._save(
            self._config.with_entry(
                FileEntry(model_id, backend, str(path), str(mm) if mm else None)
            )
        )
        self.message.setText(f"Added {model_id}.")
        return model_id

    def remove(self, model_id: str) -> bool:
        """Remove ``model_id`` from the models file, after asking; True if removed."""
        if not self.confirm(f"Remove “{model_id}” from the models list? Its files stay on disk."):
            return False
        entry = next((e for e in self._entries if e.id == model_id), None)
        self._save(self._config.without(model_id))
        if entry is not None and self._chosen == entry.spec:
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
        entry = self._selected()
        if entry is not None and entry.usable:
            self.use(entry.spec)

    def _remove_selected(self) -> None:
        entry = self._selected()
        if entry is not None and entry.id != DEFAULT_MODEL_ID:
            self.remove(entry.id)

    def _add_dialog(self) -> None:
        choice = QMessageBox.question(
            self,
            "Add a local model",
            "Add a Whisper model folder (Yes) or a GGUF file with its mmproj (No)?",
            QMessageBox.StandardButton.Yes
            | QMessageBox.StandardButton.No
            | QMessageBox.StandardButton.Cancel,
        )
        try:
            if choice == QMessageBox.StandardButton.Yes:
                folder = QFileDialog.getExistingDirectory(
                    self, "Choose a CTranslate2 Whisper model folder"
                )
                if folder:
                    self.add_local(folder)
            elif choice == QMessageBox.StandardButton.No:
                model, _ = QFileDialog.getOpenFileName(
                    self, "Choose the GGUF model", "", "GGUF (*.gguf)"
                )
                if not model:
                    return
                mmproj, _ = QFileDialog.getOpenFileName(
                    self, "Choose its mmproj (audio projector)", "", "GGUF (*.gguf)"
                )
                if mmproj:
                    self.add_local(model, mmproj)
        except (ModelError, ModelsFileError) as exc:
            QMessageBox.warning(self, "Cannot add this model", str(exc))

    # ---- download ----------------------------------------------------------------------------

    def start_download(self, repo: str, model_id: str | None = None) -> None:
        """Fetch ``repo`` on a worker thread; progress shows here, the result lands in the models file."""
        if self.downloading:
            return
        self._download_id = model_id or _new_id(Path(repo.split("/")[-1]), self._config.ids)
        self._download_repo = repo
        worker = DownloadWorker(self._download_fn, repo, self._download_id)
        thread = QThread(self)
        worker.moveToThread(thread)
        thread.started.connect(worker.run)
        worker.progress.connect(self._on_progress)
        worker.finished.connect(self._on_finished)
        worker.failed.connect(self._on_failed)
        worker.cancelled.connect(self._on_cancelled)
        for signal in (worker.finished, worker.failed, worker.cancelled):
            signal.connect(thread.quit)
        thread.finished.connect(self._thread_done)
        self._thread, self._worker = thread, worker
        self.progress.setRange(0, 0)
        self.progress.setFormat(f"Downloading {repo}…")
        self.progress.show()
        self.cancel_button.show()
        self.cancel_button.setEnabled(True)
        self.download_button.setEnabled(False)
        self.message.setText("")
        thread.start()

    def cancel_download(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            self.cancel_button.setEnabled(False)
            self.progress.setFormat("Cancelling…")

    @Slot(str, int, int)
    def _on_progress(self, name: str, done: int, total: int) -> None:
        if total > 0:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * min(done, total) / total))
            self.progress.setFormat(f"{name}: {done / 1e6:.1f} of {total / 1e6:.1f} MB (%p%)")
        else:
            self.progress.setRange(0, 0)
            self.progress.setFormat(f"{name}: {done / 1e6:.1f} MB")

    @Slot(str)
    def _on_finished(self, folder: str) -> None:
        try:
            entry = FileEntry(
                self._download_id, "whisper", folder, source=ModelSource(self._download_repo)
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
    def _thread_done(self) -> None:
        if self._thread is not None:
            self._thread.wait()
            self._thread.deleteLater()
        if self._worker is not None:
            self._worker.deleteLater()
        self._thread = self._worker = None
        self.progress.hide()
        self.cancel_button.hide()
        self.download_button.setEnabled(True)
        self._selection_changed()

    def _download_dialog(self) -> None:
        repo, ok = QInputDialog.getText(
            self,
            "Download a model",
            "Hugging Face repository (a CTranslate2 Whisper model), e.g. Systran/faster-whisper-small:",
        )
        if ok and repo.strip():
            self.start_download(repo.strip())

    def done(self, result: int) -> None:  # noqa: D401 - QDialog API: closing cancels a download
        if self._worker is not None:
            self._worker.cancel()
        if self._thread is not None:
            self._thread.quit()
            self._thread.wait(30_000)
        super().done(result)

    # ---- result ------------------------------------------------------------------------------

    def result_settings(self) -> Settings:
        t = self._settings.transcription
        return self._settings.with_group(
            transcription=replace(t, model_id=self._chosen, language=self.language.currentData())
        )

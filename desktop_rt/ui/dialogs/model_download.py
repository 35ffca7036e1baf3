"""Downloads for the Models dialog: a *download function* run by a :class:`DownloadWorker`.

A download function has the :data:`DownloadFn` signature; the default, :func:`hub_download`,
fetches from the Hugging Face hub, and tests inject others. The worker runs it on its own
:class:`QThread`; every result leaves by a signal (``progress``, then exactly one of
``finished``, ``failed``, ``cancelled``). :class:`DownloadBar` shows one download's progress.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QThread, Signal, Slot
from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QPushButton

from desktop_rt.errors import DesktopRtError

__all__ = [
    "DownloadCancelled",
    "DownloadFn",
    "Progress",
    "hub_download",
    "DownloadWorker",
    "DownloadBar",
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

    def _report(self, name: str, done: int, total: int | None) -> None:
        self.progress.emit(name, int(done), -1 if total is None else int(total))

    @Slot()
    def run(self) -> None:
        try:
            folder = self._fn(self._repo, self._model_id, self._report, lambda: self._cancel)
        except DownloadCancelled:
            self.cancelled.emit()
        except (DesktopRtError, OSError, ValueError, RuntimeError) as exc:
            self.failed.emit(str(exc) or type(exc).__name__)
        else:
            if self._cancel:
                self.cancelled.emit()
            else:
                self.finished.emit(str(folder))


class DownloadBar(QObject):
    """A progress bar and a cancel button (:attr:`row`) running one download at a time.

    Call order: :meth:`start`, then at most one of ``finished(folder)``, ``failed(message)``,
    ``cancelled()``, then ``idle()`` once its thread ended. :meth:`stop` (closing) cancels and
    waits for the thread.
    """

    finished = Signal(str)
    failed = Signal(str)
    cancelled = Signal()
    idle = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.progress = QProgressBar()
        self.progress.setTextVisible(True)
        self.progress.setAccessibleName("Download progress")
        self.cancel_button = QPushButton("Cancel do&wnload")
        self.cancel_button.setAccessibleName("Cancel download")
        self.cancel_button.setAccessibleDescription("Stop the download; nothing is added")
        self.row = QHBoxLayout()
        self.row.addWidget(self.progress, 1)
        self.row.addWidget(self.cancel_button)
        self.progress.hide()
        self.cancel_button.hide()
        self.cancel_button.clicked.connect(self.cancel)
        self._thread: QThread | None = None
        self._worker: DownloadWorker | None = None

    @property
    def busy(self) -> bool:
        return self._thread is not None

    def start(self, fn: DownloadFn, repo: str, model_id: str) -> None:
        worker = DownloadWorker(fn, repo, model_id)
        thread = QThread(self)
        worker.moveToThread(thread)
        thread.started.connect(worker.run)
        worker.progress.connect(self._on_progress)
        worker.finished.connect(self.finished)
        worker.failed.connect(self.failed)
        worker.cancelled.connect(self.cancelled)
        for signal in (worker.finished, worker.failed, worker.cancelled):
            signal.connect(thread.quit)
        thread.finished.connect(self._thread_done)
        self._thread, self._worker = thread, worker
        self.progress.setRange(0, 0)
        self.progress.setFormat(f"Downloading {repo}…")
        self.progress.show()
        self.cancel_button.show()
        self.cancel_button.setEnabled(True)
        thread.start()

    def cancel(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            self.cancel_button.setEnabled(False)
            self.progress.setFormat("Cancelling…")

    def stop(self) -> None:
        """Cancel a download in progress and wait (up to 30 s) for its thread to end."""
        if self._worker is not None:
            self._worker.cancel()
        if self._thread is not None:
            self._thread.quit()
            self._thread.wait(30_000)

    @Slot(str, int, int)
    def _on_progress(self, name: str, done: int, total: int) -> None:
        if total > 0:
            self.progress.setRange(0, 1000)
            self.progress.setValue(int(1000 * min(done, total) / total))
            self.progress.setFormat(f"{name}: {done / 1e6:.1f} of {total / 1e6:.1f} MB (%p%)")
        else:
            self.progress.setRange(0, 0)
            self.progress.setFormat(f"{name}: {done / 1e6:.1f} MB")

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
        self.idle.emit()

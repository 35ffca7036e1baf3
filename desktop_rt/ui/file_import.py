"""The window's file import: one :class:`~desktop_rt.live.file_import.FileImport` at a time.

The controller owns a :class:`FileImporter`; the window calls :meth:`FileImporter.start` (a
menu item or a dropped file) and :meth:`FileImporter.cancel`, and renders its signals, which
arrive on the UI thread. The import runs on a helper thread of the controller (shutdown cancels
it and waits for it) and shares the live model through its inference worker, so listening goes
on meanwhile; live captions may lag by one speech window.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal, Slot

from desktop_rt.live.file_import import FileImport, ImportCancelled, ImportFailed, ImportResult

if TYPE_CHECKING:
    import threading

    from desktop_rt.ui.controller import AppController

__all__ = ["AUDIO_FILTER", "FileImporter"]

log = logging.getLogger(__name__)

AUDIO_FILTER = (
    "Audio files (*.wav *.mp3 *.flac *.ogg *.opus *.m4a *.aac *.webm *.mp4 *.wma);;All files (*)"
)


class FileImporter(QObject):
    """See the module docstring. Lives on the UI thread."""

    started = Signal(str)  # the file's name
    progress = Signal(object)  # ImportProgress
    finished = Signal(object)  # ImportResult: saved in the history
    failed = Signal(str)  # why the file could not be imported, for people
    cancelled = Signal(str)  # the file's name
    _done = Signal(object)  # ImportResult or ImportFailed (emitted from the import thread)

    def __init__(
        self,
        controller: AppController,
        spawn: Callable[[str, Callable[[], None]], threading.Thread],
    ):
        super().__init__(controller)
        self._controller = controller
        self._spawn = spawn
        self._job: FileImport | None = None
        self._done.connect(self._on_done)

    @property
    def busy(self) -> bool:
        return self._job is not None

    def start(self, path: str | Path) -> bool:
        """Import ``path`` on a helper thread; False (and :attr:`failed`) when it cannot start."""
        name = Path(path).name
        if self._job is not None:
            self.failed.emit(f"{self._job.name} is still being imported; {name} was not started.")
            return False
        c = self._controller
        server, backend = c.server, c.engine.backend
        if server is None or backend is None or server.worker is None:
            self.failed.emit(f"The speech model is not ready yet; import {name} once it is.")
            return False
        job = FileImport(
            path,
            backend,
            c.writer,
            worker=server.worker,
            model=c.server_state.model,
            language=c.settings.transcription.language,
            progress=self.progress.emit,
        )
        self._job = job
        self.started.emit(name)

        def run() -> None:
            try:
                outcome: ImportResult | ImportFailed = job.run()
            except ImportFailed as exc:
                outcome = exc
            except Exception as exc:  # a bug must not leave the window importing forever
                log.exception("importing %s failed", job.path)
                outcome = ImportFailed(f"{name} could not be imported: {exc}")
            self._done.emit(outcome)

        self._spawn("desktop-rt-import", run)
        return True

    def cancel(self) -> None:
        """Stop the import under way (its thread ends soon; nothing is saved)."""
        if self._job is not None:
            self._job.cancel()

    @Slot(object)
    def _on_done(self, outcome: ImportResult | ImportFailed) -> None:
        job, self._job = self._job, None
        if isinstance(outcome, ImportResult):
            self.finished.emit(outcome)
        elif isinstance(outcome, ImportCancelled):
            self.cancelled.emit(job.name if job is not None else "")
        else:
            self.failed.emit(str(outcome))

"""An audio file imported into the history: recognised whole, saved as one "import" session.

Call order: ``FileImport(path, backend, writer, worker=...)``, then :meth:`FileImport.run` once,
on a thread of its own (it blocks for the whole file); :meth:`FileImport.cancel` from any
thread. With ``worker`` (the live model's inference worker) every model call runs as one turn
of that worker, between the live session's turns, so the model is shared safely and live
captions wait one speech window at most. Progress arrives through ``progress`` on the running
thread. The session (title: the file name, mode "import", one turn per caption segment) is
written through the history writer only when recognition ends; a cancelled or failed import
writes nothing. Nothing here touches Qt.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.backend import AsrBackend
from desktop_rt.engine.asr.file_transcriber import FileProgress, FileTranscriber
from desktop_rt.engine.asr.worker import InferenceWorker, WorkerStoppedError
from desktop_rt.engine.audio.file_decode import AudioFileReader
from desktop_rt.engine.server.rest_backend import RecognitionStopped, WorkerBackend
from desktop_rt.errors import DesktopRtError
from desktop_rt.history.speech_text import clean_speech_text
from desktop_rt.history.transcript import segments_from_words
from desktop_rt.history.writer import StoreWriter

__all__ = ["IMPORT_MODE", "FileImport", "ImportCancelled", "ImportFailed", "ImportProgress"]
__all__ += ["ImportResult"]

IMPORT_MODE = "import"
_FLUSH_SECONDS = 10.0  # how long the end of an import waits for the history write


class ImportFailed(DesktopRtError):
    """The file could not be imported; the message says why, for people."""


class ImportCancelled(ImportFailed):
    """:meth:`FileImport.cancel` was called; nothing was saved."""


@dataclass(frozen=True)
class ImportProgress:
    name: str  # the file's name
    fraction: float | None  # 0..1, None when the file does not declare its length
    done_seconds: float


@dataclass(frozen=True)
class ImportResult:
    name: str
    session_uid: str
    session_id: int | None  # the history row, once written (None: the history is unavailable)
    text: str
    seconds: float  # audio decoded
    language: str | None
    warnings: tuple[str, ...]  # repairs, and a truncated or damaged file
    partial: bool  # the file ended early or was damaged; what decoded was saved


class FileImport:
    """See the module docstring."""

    def __init__(
        self,
        path: str | Path,
        backend: AsrBackend,
        writer: StoreWriter | None,
        *,
        worker: InferenceWorker | None = None,
        model: str | None = None,
        language: str | None = None,
        progress: Callable[[ImportProgress], None] | None = None,
    ):
        self.path = Path(path)
        self.name = self.path.name
        self._backend = backend
        self._writer = writer
        self._worker = worker
        self._model = model
        self._language = language
        self._progress = progress
        self._cancelled = threading.Event()
        self._shared: WorkerBackend | None = None

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        """Stop the import soon (the model call under way ends first); nothing is saved."""
        self._cancelled.set()
        shared = self._shared
        if shared is not None:
            shared.cancel()

    def run(self) -> ImportResult:
        """Recognise and save the file; raises :class:`ImportFailed` (or ImportCancelled)."""
        try:
            reader = AudioFileReader(self.path)
        except (DesktopRtError, OSError) as exc:
            raise ImportFailed(f"{self.name} could not be read: {exc}") from exc
        backend = self._open_backend()
        try:
            transcriber = FileTranscriber(backend, language=self._language)
            result = transcriber.transcribe(
                self._chunks(reader), total_seconds=reader.duration, progress=self._report
            )
        except (RecognitionStopped, _Stop) as exc:
            if self.cancelled:
                raise ImportCancelled(f"The import of {self.name} was cancelled.") from exc
            raise ImportFailed(f"{self.name}: the model stopped during the import.") from exc
        except (DesktopRtError, OSError) as exc:
            raise ImportFailed(f"{self.name} could not be imported: {exc}") from exc
        finally:
            if self._shared is not None:
                self._shared.close()
        if self.cancelled:
            raise ImportCancelled(f"The import of {self.name} was cancelled.")
        if not result.words:
            raise ImportFailed(f"No speech was found in {self.name}.")
        uid = f"import-{uuid.uuid4().hex}"
        session_id = self._save(uid, result.words, result.language)
        return ImportResult(
            self.name,
            uid,
            session_id,
            result.text,
            result.seconds,
            result.language,
            tuple(reader.report.warnings()),
            reader.report.partial,
        )

    def _open_backend(self) -> AsrBackend:
        if self._worker is None:
            return self._backend
        try:
            self._shared = WorkerBackend(self._backend, self._worker)
        except WorkerStoppedError as exc:
            raise ImportFailed("The speech model is not running; try again once it is.") from exc
        if self.cancelled:
            self._shared.cancel()
        return self._shared

    def _chunks(self, reader: AudioFileReader) -> Iterator[np.ndarray]:
        """The file's audio (read on the planning thread), ending early once cancelled."""
        for chunk in reader.chunks():
            if self.cancelled:
                raise _Stop
            yield chunk

    def _report(self, update: FileProgress) -> None:
        if self.cancelled:
            raise _Stop
        if self._progress is not None:
            self._progress(ImportProgress(self.name, update.fraction, update.done_seconds))

    def _save(self, uid: str, words: tuple[Word, ...], language: str | None) -> int | None:
        """Write the session, one turn per segment; its row id once written (None: unknown)."""
        writer = self._writer
        if writer is None:
            return None
        fields = {"title": self.name, "model": self._model, "language": language}
        writer.begin_session(uid, mode=IMPORT_MODE, **fields)
        for n, segment in enumerate(segments_from_words(words), 1):
            text = clean_speech_text(segment.text).strip()
            if text:
                writer.save_turn(
                    uid, f"seg-{n}", text=text, start=segment.start, end=segment.end, completed=True
                )
        writer.end_session(uid)
        found: list[int] = []
        writer.submit(lambda store: found.append(store.begin_session(uid)))  # its id, no change
        writer.flush(_FLUSH_SECONDS)
        return found[0] if found else None


class _Stop(Exception):
    """Raised inside the recognition to end it once :meth:`FileImport.cancel` was called."""

"""A model's backend as seen from a REST transcription: every call runs on its inference worker.

The model is not re-entrant and one thread runs its inference (docs/architecture.md). A REST
request recognises its file on a thread of its own with a
:class:`~desktop_rt.engine.asr.file_transcriber.FileTranscriber` over a :class:`WorkerBackend`:
each ``transcribe`` call (one speech window) becomes one turn of the model's
:class:`~desktop_rt.engine.asr.worker.InferenceWorker`, between the turns of realtime sessions.
Call order: ``WorkerBackend(backend, worker)``, ``transcribe(...)`` from one non-worker thread
(it blocks until its turn is done), ``close()`` (leaves the worker; a waiting call then raises
:class:`RecognitionStopped`, as it does once ``cancel()`` was called or the worker stopped).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout

import numpy as np

from desktop_rt.core_types import Word
from desktop_rt.engine.asr.agreement import StreamUpdate
from desktop_rt.engine.asr.backend import AsrBackend, BackendTraits, DetectedLanguage, Task
from desktop_rt.engine.asr.worker import InferenceWorker, WorkerResult, WorkerStream
from desktop_rt.engine.protocol.events import AudioChunk, Respelling

__all__ = ["RecognitionStopped", "WorkerBackend"]

_POLL_SECONDS = 0.25  # how often a waiting call checks that its stream is still open
_WAKE = np.zeros(0, dtype=np.float32)  # an empty chunk: the worker then calls process()


class RecognitionStopped(Exception):
    """The request was cancelled, or the model's worker stopped (the model was unloaded)."""


_Call = Callable[[], tuple[Sequence[Word], DetectedLanguage | None]]


class _CallTranscriber:
    """The worker's view of a REST stream: ``process()`` runs the queued backend call."""

    def __init__(self) -> None:
        self.call: tuple[_Call, Future[tuple[Sequence[Word], DetectedLanguage | None]]] | None = (
            None
        )

    def insert_audio(self, samples: np.ndarray) -> None:
        pass

    def process(self) -> StreamUpdate:
        call, self.call = self.call, None
        if call is not None:
            run, future = call
            try:
                future.set_result(run())
            except BaseException as exc:  # handed to the waiting thread
                future.set_exception(exc)
        return StreamUpdate()

    def finish(self) -> StreamUpdate:
        return self.process()

    def clear(self) -> None:
        pass

    @property
    def room_seconds(self) -> float:
        return float("inf")  # its audio comes with the call, not through the worker

    @property
    def turn_to_decode(self) -> bool:
        return False  # a REST call is a window of its own, heard whole already

    def decode_turn(self) -> tuple[Word, ...] | None:
        return None

    def set_language(self, language: str | None) -> None:
        pass

    def set_prompt(self, prompt: str | None, respellings: tuple[Respelling, ...] = ()) -> None:
        pass


def _ignore(_result: WorkerResult) -> None:
    pass


class WorkerBackend:
    """An :class:`AsrBackend` whose ``transcribe`` runs ``backend.transcribe`` on ``worker``."""

    def __init__(self, backend: AsrBackend, worker: InferenceWorker):
        self._backend = backend
        self._calls = _CallTranscriber()
        self._stream: WorkerStream = worker.open_stream(_ignore, self._calls)
        self._cancelled = threading.Event()
        self._detected: DetectedLanguage | None = None

    @property
    def name(self) -> str:
        return self._backend.name

    @property
    def traits(self) -> BackendTraits:
        return self._backend.traits

    @property
    def detected_language(self) -> DetectedLanguage | None:
        return self._detected

    def transcribe(
        self,
        audio: np.ndarray,
        *,
        prompt: str | None = None,
        language: str | None = None,
        prefix: str | None = None,
        task: Task = "transcribe",
        whole: bool = False,
    ) -> Sequence[Word]:
        """One window, transcribed in the worker's next turn for this stream."""
        backend = self._backend

        def run() -> tuple[Sequence[Word], DetectedLanguage | None]:
            if whole:  # given only where the traits say whole_context, as task and prefix are
                words = backend.transcribe(
                    audio, prompt=prompt, language=language, prefix=prefix, task=task, whole=True
                )
            elif task == "translate":  # as streaming passes prefix: only to a backend that can
                words = backend.transcribe(
                    audio, prompt=prompt, language=language, prefix=prefix, task=task
                )
            else:
                words = backend.transcribe(audio, prompt=prompt, language=language, prefix=prefix)
            return words, backend.detected_language

        future: Future[tuple[Sequence[Word], DetectedLanguage | None]] = Future()
        self._calls.call = (run, future)
        self._stream.submit([AudioChunk("rest", _WAKE)])
        while True:
            if self._cancelled.is_set() or self._stream.closed:
                raise RecognitionStopped("the transcription was stopped")
            try:
                words, self._detected = future.result(timeout=_POLL_SECONDS)
            except FutureTimeout:
                continue
            return words

    def cancel(self) -> None:
        """Make the waiting call (and any later one) raise :class:`RecognitionStopped`."""
        self._cancelled.set()

    def close(self) -> None:
        """Leave the worker; the shared backend stays loaded."""
        self._cancelled.set()
        self._stream.close()

"""A model loaded in this process: its backend and the inference worker serving its sessions.

:class:`InProcessRuntime` is the runtime that in-process kinds (``whisper``, ``llama``) build for
the router, and the one a :class:`~desktop_rt.engine.server.server.RealtimeServer` wraps around
the backend it is given. Call order: ``start()`` (or ``start_now()`` off the loop), sessions use
``worker``, ``stop()``. Loading happens on a helper thread so the server loop keeps answering.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable

from desktop_rt.engine.asr.backend import AsrBackend
from desktop_rt.engine.asr.streaming import StreamingConfig, StreamingTranscriber
from desktop_rt.engine.asr.worker import InferenceWorker, WorkerConfig
from desktop_rt.engine.models.entry import ModelEntry
from desktop_rt.engine.models.kinds import entry_loader

__all__ = ["InProcessRuntime", "entry_loader", "entry_streaming"]

_STREAMING = StreamingConfig()
_WORKER = WorkerConfig()


class InProcessRuntime:
    """A backend loaded by ``load`` and the worker that runs its sessions.

    ``owns_backend``: ``stop`` closes the backend (False for a backend the caller keeps owning;
    ``load`` then returns that same object each time).
    """

    def __init__(
        self,
        model_id: str,
        load: Callable[[], AsrBackend],
        *,
        owns_backend: bool = True,
        streaming: StreamingConfig = _STREAMING,
        worker: WorkerConfig = _WORKER,
    ):
        self.model_id = model_id
        self._load = load
        self._owns_backend = owns_backend
        self.streaming = streaming
        self._worker_config = worker
        self.backend: AsrBackend | None = None
        self.worker: InferenceWorker | None = None

    @property
    def alive(self) -> bool:
        """Always true: a model in this process does not go away by itself."""
        return True

    def start_now(self) -> None:
        """Load the backend and start the worker on this thread (blocks for the load)."""
        backend = self._load()
        self.backend = backend
        worker = InferenceWorker(
            lambda: StreamingTranscriber(backend, self.streaming),
            self._worker_config,
            name=f"desktop-rt-inference-{self.model_id}",
        )
        worker.start()
        self.worker = worker

    async def start(self) -> None:
        await asyncio.to_thread(self.start_now)

    def transcriber(self, *, turn_decode: bool) -> StreamingTranscriber:
        """A stream's transcriber over the loaded backend with ``turn_decode`` set: off for a
        stream whose completed text is not its whole-turn decode (a meeting's microphone)."""
        if self.backend is None:
            raise RuntimeError(f"the model '{self.model_id}' is not loaded")
        return StreamingTranscriber(
            self.backend, dataclasses.replace(self.streaming, turn_decode=turn_decode)
        )

    def stop_now(self) -> None:
        """Stop the worker (an inference in progress finishes first) and free the backend."""
        if self.worker is not None:
            self.worker.stop()
        backend, self.backend = self.backend, None
        if backend is not None and self._owns_backend:
            backend.close()

    async def stop(self) -> None:
        await asyncio.to_thread(self.stop_now)


def entry_streaming(entry: ModelEntry, base: StreamingConfig) -> StreamingConfig:
    """The streaming settings of ``entry``'s sessions: ``options.language`` is their default."""
    language = entry.option("language")
    return dataclasses.replace(base, language=language) if language else base

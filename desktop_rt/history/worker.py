"""The history browser's I/O thread: queries, edits and exports off the UI thread.

:class:`HistoryWorker` owns one :class:`~desktop_rt.history.store.TranscriptStore` connection on a
thread of its own (opened at the first job; a failed open fails that job, the next one retries).
:meth:`~HistoryWorker.submit` queues a job, a function of the store, and returns a
:class:`~concurrent.futures.Future` of its result; jobs run one at a time, in order.
:meth:`~HistoryWorker.close` lets the queued jobs finish, then closes the connection.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from desktop_rt.history.store import TranscriptStore

__all__ = ["HistoryWorker"]

T = TypeVar("T")

_Job = tuple[Callable[[TranscriptStore], Any], "Future[Any]"]


class HistoryWorker:
    """See the module docstring."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._queue: queue.Queue[_Job | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="desktop-rt-history", daemon=True)
        self._closed = False
        self._thread.start()

    def submit(self, job: Callable[[TranscriptStore], T]) -> Future[T]:
        """Run ``job(store)`` on the worker thread; the future holds its result or exception."""
        future: Future[T] = Future()
        if self._closed:
            future.set_exception(RuntimeError("the history worker is closed"))
            return future
        self._queue.put((job, future))
        return future

    def close(self, timeout: float | None = None) -> None:
        """Finish the queued jobs, then stop. ``timeout`` None: do not wait for that."""
        if not self._closed:
            self._closed = True
            self._queue.put(None)
        if timeout is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        store: TranscriptStore | None = None
        try:
            while (item := self._queue.get()) is not None:
                job, future = item
                if not future.set_running_or_notify_cancel():
                    continue
                try:
                    if store is None:
                        store = TranscriptStore(self.path)
                    future.set_result(job(store))
                except Exception as exc:  # noqa: BLE001 - handed to whoever waits on the future
                    future.set_exception(exc)
        finally:
            if store is not None:
                store.close()

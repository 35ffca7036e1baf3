"""History jobs for the UI: run on a :class:`~desktop_rt.history.worker.HistoryWorker`, answered here.

:meth:`HistoryJobs.run` hands a job (a function of the store) to the worker thread and calls
``on_done(result)`` or ``on_error(exception)`` back on the UI thread, always later (never inside
``run``), in the order the jobs were given. :attr:`HistoryJobs.busy_changed` says when jobs are
pending and when the last one was answered.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from PySide6.QtCore import QObject, Qt, Signal, Slot

from desktop_rt.history.store import TranscriptStore
from desktop_rt.history.worker import HistoryWorker

__all__ = ["HistoryJobs"]

T = TypeVar("T")
_Callbacks = tuple[Callable[[Any], None], Callable[[Exception], None]]


class HistoryJobs(QObject):
    """See the module docstring. Lives on the UI thread; owns its worker."""

    busy_changed = Signal(bool)
    _answered = Signal(object, object)  # (on_done, on_error), future: emitted on the worker thread

    def __init__(self, path: Path, parent: QObject | None = None):
        super().__init__(parent)
        self._worker = HistoryWorker(path)
        self._pending = 0
        self.closed = False
        self._answered.connect(self._deliver, Qt.ConnectionType.QueuedConnection)

    @property
    def busy(self) -> bool:
        return self._pending > 0

    def run(
        self,
        job: Callable[[TranscriptStore], T],
        on_done: Callable[[T], None],
        on_error: Callable[[Exception], None],
    ) -> None:
        self._pending += 1
        if self._pending == 1:
            self.busy_changed.emit(True)
        future = self._worker.submit(job)
        future.add_done_callback(lambda done: self._answer((on_done, on_error), done))

    def close(self, timeout: float | None = None) -> None:
        """Stop the worker once the jobs given so far ran; ``timeout`` None: do not wait for
        that, else wait that long for its thread to end (before deleting this object)."""
        self.closed = True
        self._worker.close(timeout)

    def _answer(self, callbacks: object, future: Future[Any]) -> None:
        with contextlib.suppress(RuntimeError):  # the view was deleted meanwhile: nobody asks
            self._answered.emit(callbacks, future)

    @Slot(object, object)
    def _deliver(self, callbacks: _Callbacks, future: Future[Any]) -> None:
        self._pending -= 1
        on_done, on_error = callbacks
        try:
            error = future.exception()
            if error is None:
                on_done(future.result())
            elif isinstance(error, Exception):
                on_error(error)
            else:
                raise error
        finally:
            if self._pending == 0:
                self.busy_changed.emit(False)

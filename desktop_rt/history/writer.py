"""The history's writer thread: the realtime path hands writes over without waiting.

:class:`StoreWriter` owns a :class:`~desktop_rt.history.store.TranscriptStore` on its own thread.
Writes are queued and never block. When one fails (e.g. the disk is full) it reports the
:class:`~desktop_rt.history.store.StoreError` once, keeps the writes that failed in memory, in
order, and retries them before each later write and every ``retry_seconds``.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from desktop_rt.history.store import StoreError, TranscriptStore, history_path

__all__ = ["StoreWriter"]

log = logging.getLogger(__name__)

_Op = Callable[[TranscriptStore], object]
_STOP = object()


@dataclass(frozen=True)
class _Setting:
    """A change to the connection itself, applied at once (not queued behind failed writes)."""

    apply: _Op


class StoreWriter:
    """See the module docstring. ``on_error(StoreError)`` runs on the writer thread when a write
    first fails; ``on_recovered()`` when the writes that failed finally went through."""

    def __init__(
        self,
        path: Path | str | None = None,
        on_error: Callable[[StoreError], None] | None = None,
        on_recovered: Callable[[], None] | None = None,
        retry_seconds: float = 5.0,
    ):
        self.path = Path(path) if path is not None else history_path()
        self._on_error = on_error
        self._on_recovered = on_recovered
        self._retry_seconds = retry_seconds
        self._queue: queue.Queue[object] = queue.Queue()  # ops, _Setting, Event, _STOP
        self._failed: list[_Op] = []
        self._failing = False
        self._opened = threading.Event()
        self._open_error: StoreError | None = None
        self._thread = threading.Thread(target=self._run, name="desktop-rt-store", daemon=True)
        self._thread.start()
        self._opened.wait()
        if self._open_error is not None:
            raise self._open_error

    @property
    def pending_failed(self) -> int:
        """Writes that failed and wait for a retry."""
        return len(self._failed)

    def begin_session(self, uid: str, **fields: Any) -> None:
        self.submit(lambda s: s.begin_session(uid, **fields))

    def end_session(self, uid: str, ended_at: str | None = None) -> None:
        self.submit(lambda s: s.end_session(uid, ended_at))

    def set_session_mode(self, uid: str, mode: str) -> None:
        self.submit(lambda s: s.set_session_mode(uid, mode))

    def save_turn(self, uid: str, item_id: str, **fields: Any) -> None:
        self.submit(lambda s: s.save_turn(uid, item_id, **fields))

    def submit(self, op: _Op) -> None:
        self._queue.put(op)

    def limit_size(self, max_bytes: int) -> None:
        """Cap the file size (see :meth:`TranscriptStore.limit_size`); applies before retries."""
        self._queue.put(_Setting(lambda s: s.limit_size(max_bytes)))

    def flush(self, timeout: float | None = 10.0) -> bool:
        """Wait until every write queued so far was attempted; False on timeout."""
        done = threading.Event()
        self._queue.put(done)
        return done.wait(timeout)

    def close(self, timeout: float | None = 10.0) -> None:
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join(timeout)

    def _run(self) -> None:
        try:
            store = TranscriptStore(self.path)
        except StoreError as exc:
            self._open_error = exc
            self._opened.set()
            return
        self._opened.set()
        try:
            while True:
                try:
                    item = self._queue.get(timeout=self._retry_seconds if self._failed else None)
                except queue.Empty:
                    self._retry(store)
                    continue
                if item is _STOP:
                    self._retry(store)
                    break
                if isinstance(item, threading.Event):
                    item.set()
                    continue
                if isinstance(item, _Setting):
                    item.apply(store)
                    self._retry(store)
                    continue
                self._failed.append(cast(_Op, item))
                self._retry(store)
        finally:
            if self._failed:
                log.error("%d history writes could not be saved before closing", len(self._failed))
            store.close()

    def _retry(self, store: TranscriptStore) -> None:
        while self._failed:
            try:
                self._failed[0](store)
            except StoreError as exc:
                log.warning("history write failed: %s", exc)
                if not self._failing:
                    self._failing = True
                    if self._on_error is not None:
                        self._on_error(exc)
                return
            self._failed.pop(0)
        if self._failing:
            self._failing = False
            if self._on_recovered is not None:
                self._on_recovered()

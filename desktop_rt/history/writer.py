"""The history's writer thread: the realtime path hands writes over without waiting.

:class:`StoreWriter` owns a :class:`~desktop_rt.history.store.TranscriptStore` on its own thread.
Writes are queued and never block. When one fails (e.g. the disk is full) it reports the
:class:`~desktop_rt.history.store.StoreError` once, keeps the writes that failed in memory, in
order, and retries them before each later write and every ``retry_seconds``. A damaged file
(:class:`~desktop_rt.history.store.StoreCorruptError`) is moved aside and a fresh history started:
at open the copy's path is :attr:`StoreWriter.damaged_copy` (offer the user to recover it); while
running, what can be read is recovered into the fresh file at once and ``on_rotated`` is called.
A user's correction of a live turn (:meth:`StoreWriter.correct_turn`) is queued behind the
turn's own writes, so it always finds the turn; one that cannot apply (the turn is gone, the text
empty) is logged and dropped, never retried.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from desktop_rt.history.recover import move_aside, recover_history, rotated_message
from desktop_rt.history.store import (
    CorrectionError,
    StoreCorruptError,
    StoreError,
    TranscriptStore,
    TurnNotFoundError,
    history_path,
)

__all__ = ["StoreWriter", "open_history_writer"]

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
        on_rotated: Callable[[Path], None] | None = None,
    ):
        self.path = Path(path) if path is not None else history_path()
        self._on_error = on_error
        self._on_recovered = on_recovered
        self._retry_seconds = retry_seconds
        self._on_rotated = on_rotated
        self.damaged_copy: Path | None = None
        """Where a damaged history found at open was moved (None when it was fine)."""
        self._queue: queue.Queue[object] = queue.Queue()  # ops, _Setting, Event, _STOP
        self._failed: list[_Op] = []
        self._failing = False
        self._opened = threading.Event()
        self._store: TranscriptStore
        self._begun: dict[str, dict[str, Any]] = {}  # sessions not ended yet
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
        self._begun[uid] = fields  # begun again in a fresh file after a rotation
        self.submit(lambda s: s.begin_session(uid, **fields))

    def end_session(self, uid: str, ended_at: str | None = None) -> None:
        self._begun.pop(uid, None)
        self.submit(lambda s: s.end_session(uid, ended_at))

    def set_session_mode(self, uid: str, mode: str) -> None:
        self.submit(lambda s: s.set_session_mode(uid, mode))

    def save_turn(self, uid: str, item_id: str, **fields: Any) -> None:
        self.submit(lambda s: s.save_turn(uid, item_id, **fields))

    def correct_turn(self, uid: str, item_id: str, text: str) -> None:
        """Show ``text`` for the turn ``item_id`` of session ``uid`` (see the module docstring)."""

        def correct(store: TranscriptStore) -> None:
            try:
                store.correct_turn(store.turn_id(uid, item_id), text)
            except (TurnNotFoundError, CorrectionError) as exc:
                log.warning("correction not saved: %s", exc)

        self.submit(correct)

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

    def _open(self) -> TranscriptStore:
        try:
            return TranscriptStore(self.path)
        except StoreCorruptError as exc:
            self.damaged_copy = move_aside(self.path)
            log.warning("%s Moved aside as %s; a new history was started.", exc, self.damaged_copy)
            return TranscriptStore(self.path)

    def _rotate(self, store: TranscriptStore, exc: StoreCorruptError) -> TranscriptStore:
        """The file broke while running: move it aside, start anew, copy back what is readable."""
        moved = move_aside(self.path)
        fresh = TranscriptStore(self.path)
        store.close()
        try:
            got = recover_history(moved, fresh)
            log.warning("%s Moved aside as %s; recovered %s.", exc, moved, got)
        except StoreError as failed:
            log.warning("%s Moved aside as %s; nothing recovered: %s", exc, moved, failed)
        for uid, fields in list(self._begun.items()):  # sessions still open go on in the new file
            fresh.begin_session(uid, **fields)
        if self._on_rotated is not None:
            self._on_rotated(moved)
        return fresh

    def _run(self) -> None:
        try:
            self._store = self._open()
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
                    self._retry()
                    continue
                if item is _STOP:
                    self._retry()
                    break
                if isinstance(item, threading.Event):
                    item.set()
                    continue
                if isinstance(item, _Setting):
                    item.apply(self._store)
                    self._retry()
                    continue
                self._failed.append(cast(_Op, item))
                self._retry()
        finally:
            if self._failed:
                log.error("%d history writes could not be saved before closing", len(self._failed))
            self._store.close()

    def _retry(self) -> None:
        rotated = False
        while self._failed:
            try:
                self._failed[0](self._store)
            except StoreCorruptError as exc:
                if rotated:  # the fresh file fails too: report it like any failure
                    self._report(exc)
                    return
                rotated = True
                try:
                    self._store = self._rotate(self._store, exc)
                except (StoreError, OSError) as failed:
                    log.error("could not move the damaged history aside: %s", failed)
                    self._report(exc)
                    return
                continue
            except StoreError as exc:
                self._report(exc)
                return
            self._failed.pop(0)
        if self._failing:
            self._failing = False
            if self._on_recovered is not None:
                self._on_recovered()

    def _report(self, exc: StoreError) -> None:
        log.warning("history write failed: %s", exc)
        if not self._failing:
            self._failing = True
            if self._on_error is not None:
                self._on_error(exc)


def open_history_writer(
    path: Path | None, on_problem: Callable[[str], None]
) -> tuple[StoreWriter | None, str]:
    """The app's writer and a note to show once ("" when there is none).

    ``on_problem(text)`` runs on the writer thread with a failure, a rotation while running, or
    "" once saving works again. No writer (None) when the history cannot be opened at all.
    """
    try:
        writer = StoreWriter(
            path,
            on_error=lambda exc: on_problem(str(exc)),
            on_recovered=lambda: on_problem(""),
            on_rotated=lambda moved: on_problem(rotated_message(moved, recovered=True)),
        )
    except StoreError as exc:
        log.error("history unavailable: %s", exc)
        return None, f"{exc} History is not saved in this session."
    if writer.damaged_copy is not None:  # told once: the next start finds a good file
        return writer, rotated_message(writer.damaged_copy)
    return writer, ""

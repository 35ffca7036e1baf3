"""Activity: one row per realtime session, written when it closes (``GET /v1/activity``).

Rows live in ``<data dir>/activity.sqlite3``, table ``activity`` (transcripts are elsewhere,
in :mod:`desktop_rt.history.store`). One thread owns the connection: :meth:`ActivityLog.record`
hands a row over and returns at once, and reads go through the same thread, so a read sees
every row recorded before it. A failed write is logged; the session is not affected. A damaged
file is moved aside (``activity.damaged-<UTC time>.sqlite3``) and a fresh one started; the read
that found it raises :class:`ActivityUnavailable`, a write is retried on the fresh file.
:class:`ActivityMeter` counts what one session did (audio seconds in, items, words out) from
event objects (in-process sessions) or JSON frames (the command-model proxy), and builds its row.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from desktop_rt.errors import DesktopRtError
from desktop_rt.paths import data_dir
from desktop_rt.timestamps import now_iso

__all__ = [
    "ACTIVITY_FILE",
    "ActivityRow",
    "ActivityMeter",
    "ActivityLog",
    "ActivityUnavailable",
    "activity_path",
    "activity_timestamp",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

ACTIVITY_FILE = "activity.sqlite3"
COMPLETED = "conversation.item.input_audio_transcription.completed"
_APPEND = "input_audio_buffer.append"
_UPDATES = ("session.update", "transcription_session.update")
_SESSION_EVENTS = (
    "session.created",
    "session.updated",
    "transcription_session.created",
    "transcription_session.updated",
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS activity (
    id INTEGER PRIMARY KEY,
    session_id TEXT,
    started_at TEXT NOT NULL,
    ended_at TEXT NOT NULL,
    model TEXT,
    client TEXT NOT NULL,
    audio_seconds REAL NOT NULL DEFAULT 0,
    items INTEGER NOT NULL DEFAULT 0,
    words INTEGER NOT NULL DEFAULT 0,
    close_code INTEGER,
    close_reason TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS activity_by_end ON activity (ended_at);
"""
_COLUMNS = (
    "session_id",
    "started_at",
    "ended_at",
    "model",
    "client",
    "audio_seconds",
    "items",
    "words",
    "close_code",
    "close_reason",
)


def activity_path() -> Path:
    return data_dir() / ACTIVITY_FILE


def activity_timestamp() -> str:
    """Now in UTC with milliseconds: the activity log's timestamps."""
    return now_iso(utc=True, timespec="milliseconds")


@dataclass(frozen=True)
class ActivityRow:
    session_id: str | None
    started_at: str
    ended_at: str
    model: str | None
    client: str
    audio_seconds: float
    items: int
    words: int
    close_code: int | None
    close_reason: str
    id: int | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class ActivityMeter:
    """What one session did, counted from its events; :meth:`row` is its activity row."""

    def __init__(self) -> None:
        self.started_at = activity_timestamp()
        self.audio_seconds = 0.0
        self.items = 0
        self.words = 0
        self.session_id: str | None = None
        self._bytes_per_second = 16_000 * 2  # until the server or the client states the format
        self._client_format = False

    def completed(self, transcript: str) -> None:
        self.items += 1
        self.words += len(transcript.split())

    def row(
        self, model: str | None, client: str, close_code: int | None, reason: str
    ) -> ActivityRow:
        """The session's row, ending now: the one place a row is built from a meter."""
        return ActivityRow(
            self.session_id,
            self.started_at,
            activity_timestamp(),
            model,
            client,
            round(self.audio_seconds, 3),
            self.items,
            self.words,
            close_code,
            reason,
        )

    def server_event(self, event: dict[str, Any]) -> None:
        """A server event as JSON (the proxy's path)."""
        kind = event.get("type")
        if kind == COMPLETED:
            self.completed(str(event.get("transcript") or ""))
        elif kind in _SESSION_EVENTS and isinstance(event.get("session"), dict):
            session = event["session"]
            if self.session_id is None and isinstance(session.get("id"), str):
                self.session_id = session["id"]
            if not self._client_format:  # the server's default, until the client names one
                self._read_format(session)

    def server_frame(self, frame: str | bytes) -> None:
        if (
            isinstance(frame, str)
            and len(frame) < 1 << 20
            and ('"session' in frame or COMPLETED in frame)
        ):
            event = _json_object(frame)
            if event is not None:
                self.server_event(event)

    def client_frame(self, frame: str | bytes) -> None:
        """A client frame passed through: appends count as audio, in the format last declared.

        The client's own ``session.update`` decides the format of the appends after it (the
        server applies events in order, and its ``session.updated`` comes back later).
        """
        if not isinstance(frame, str):
            return
        head = frame[:200]
        if _APPEND in head or _APPEND in frame[-200:]:
            event = _json_object(frame)
            audio = (
                event.get("audio") if event is not None and event.get("type") == _APPEND else None
            )
            if isinstance(audio, str):
                with contextlib.suppress(ValueError, binascii.Error):
                    self.audio_seconds += (
                        len(base64.b64decode(audio, validate=True)) / self._bytes_per_second
                    )
        elif "update" in head and len(frame) < 1 << 20:
            event = _json_object(frame)
            if (
                event is not None
                and event.get("type") in _UPDATES
                and isinstance(event.get("session"), dict)
            ):
                self._client_format |= self._read_format(event["session"])

    def _read_format(self, session: dict[str, Any]) -> bool:
        """Take the input format ``session`` states (GA or beta shape); True if it states one."""
        audio = session.get("audio")
        audio_in = audio.get("input") if isinstance(audio, dict) else None
        fmt = audio_in.get("format") if isinstance(audio_in, dict) else None
        beta = session.get("input_audio_format")
        if isinstance(fmt, dict):
            kind, rate = fmt.get("type", "audio/pcm"), fmt.get("rate")
            if kind in ("audio/pcmu", "audio/pcma"):
                self._bytes_per_second = 8_000
            else:
                self._bytes_per_second = 2 * (
                    rate if isinstance(rate, int) and rate > 0 else 24_000
                )
            return True
        if isinstance(beta, str):
            self._bytes_per_second = 8_000 if beta.startswith("g711") else 24_000 * 2
            return True
        return False


def _json_object(frame: str) -> dict[str, Any] | None:
    try:
        event = json.loads(frame)
    except (ValueError, RecursionError):
        return None
    return event if isinstance(event, dict) else None


class ActivityUnavailable(DesktopRtError):
    """The activity database cannot be read now; the message says why and what was done."""


def _damaged(exc: sqlite3.Error) -> bool:
    """Not a database, or a corrupt one (not a locked or unreadable file: those pass)."""
    name = getattr(exc, "sqlite_errorname", None) or ""
    return name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT"))


class ActivityLog:
    """The activity table, owned by one thread; see the module docstring."""

    def __init__(self, path: Path | str | None = None):
        self.path = Path(path) if path is not None else activity_path()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="desktop-rt-activity")
        self._db: sqlite3.Connection | None = None
        self._cond = threading.Condition()
        self._recorded = 0
        self._closed = False

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path)
            try:
                db.row_factory = sqlite3.Row
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.executescript(_SCHEMA)
            except BaseException:
                db.close()
                raise
            self._db = db
        return self._db

    # ---- writes ----------------------------------------------------------------------------

    def record(self, row: ActivityRow) -> None:
        """Write ``row`` on the log's thread; returns at once."""
        if self._closed:
            return
        self._executor.submit(self._insert, row)

    def _insert(self, row: ActivityRow) -> None:
        def insert(db: sqlite3.Connection) -> None:
            with db:
                db.execute(
                    f"INSERT INTO activity ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})",
                    tuple(getattr(row, c) for c in _COLUMNS),
                )

        try:
            try:
                self._use(insert)
            except ActivityUnavailable:  # moved aside: the row goes to the fresh file
                self._use(insert)
        except (sqlite3.Error, OSError, ActivityUnavailable):
            log.exception("could not write an activity row to %s", self.path)
        finally:
            with self._cond:
                self._recorded += 1
                self._cond.notify_all()

    def wait_recorded(self, count: int, timeout: float | None = None) -> bool:
        """Block until ``count`` rows were handled by this log (written or failed)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._recorded >= count, timeout)

    @property
    def recorded(self) -> int:
        with self._cond:
            return self._recorded

    # ---- reads -----------------------------------------------------------------------------

    def rows_future(self, limit: int = 100, model: str | None = None) -> Future[list[ActivityRow]]:
        return self._executor.submit(self._select, limit, model)

    def rows(self, limit: int = 100, model: str | None = None) -> list[ActivityRow]:
        """Newest first; ``model`` keeps only that model's rows."""
        rows: list[ActivityRow] = self.rows_future(limit, model).result()
        return rows

    def _select(self, limit: int, model: str | None) -> list[ActivityRow]:
        where, params = ("WHERE model = ?", (model,)) if model else ("", ())
        found = self._use(
            lambda db: db.execute(
                f"SELECT id, {', '.join(_COLUMNS)} FROM activity {where} ORDER BY id DESC LIMIT ?",
                (*params, max(0, int(limit))),
            ).fetchall()
        )
        return [ActivityRow(**dict(r)) for r in found]

    # ---- damage ----------------------------------------------------------------------------

    def _use(self, action: Callable[[sqlite3.Connection], T]) -> T:
        """``action(db)``; a damaged file is moved aside and :class:`ActivityUnavailable` raised."""
        try:
            return action(self._connect())
        except sqlite3.DatabaseError as exc:
            if not _damaged(exc):
                raise
            damage = exc
        try:
            moved = self._move_aside()
        except OSError as exc:
            raise ActivityUnavailable(
                f"the activity log {self.path} is damaged ({damage}) and could not be moved "
                f"aside ({exc}); move or delete it, then ask again"
            ) from exc
        log.warning(
            "the activity log %s was damaged (%s): moved it to %s and started a new one",
            self.path,
            damage,
            moved.name,
        )
        raise ActivityUnavailable(
            f"the activity log was damaged ({damage}); it was moved to {moved} and a new one "
            "was started: ask again for the activity recorded from now on"
        )

    def _move_aside(self) -> Path:
        """Rename the database and its -wal and -shm files to ``<stem>.damaged-<time>``."""
        if self._db is not None:
            try:
                self._db.close()
            finally:
                self._db = None
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        target, n = self.path.with_name(f"{self.path.stem}.damaged-{stamp}{self.path.suffix}"), 1
        while target.exists():
            n += 1
            target = target.with_name(f"{self.path.stem}.damaged-{stamp}-{n}{self.path.suffix}")
        for extra in ("", "-wal", "-shm"):
            source = Path(f"{self.path}{extra}")
            if source.exists():
                os.replace(source, f"{target}{extra}")
        return target

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True

        def shut() -> None:
            if self._db is not None:
                self._db.close()
                self._db = None

        self._executor.submit(shut)
        self._executor.shutdown(wait=True)

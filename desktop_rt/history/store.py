"""Transcript history in SQLite (``<data dir>/history.sqlite3``), saved as it is produced.

Two tables: ``sessions`` (one row per recording session, keyed by a ``uid`` the caller makes)
and ``turns`` (one row per conversation item, keyed by ``(session, item_id)``). Every write is
idempotent (it sets a turn's whole committed text, never appends), so a failed write can be
retried as it is. A turn's ``speaker`` labels its stream in meeting mode ("You", "Others"; NULL
for a one-stream session), ``translation`` holds its live English line, ``probabilities`` its
words' (JSON, :mod:`~desktop_rt.history.confidence`). A user's correction replaces ``text`` and
keeps what the recognizer wrote in ``original_text`` until it is reverted; later recognizer
writes to a corrected turn go to ``original_text``, never over the correction. Files from before
a column existed get it when opened. WAL mode with ``synchronous=NORMAL``: a crash of the process
loses nothing written. A :class:`TranscriptStore` is one connection, used only by the thread that opened it;
:class:`~desktop_rt.history.writer.StoreWriter` and :class:`~desktop_rt.history.worker.HistoryWorker`
each own one on a thread of their own.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from desktop_rt.errors import DesktopRtError
from desktop_rt.history.confidence import decode_probabilities, encode_probabilities
from desktop_rt.history.rows import SessionRow, TurnRow
from desktop_rt.history.session_transcript import build_transcript, turn_words
from desktop_rt.history.transcript import Transcript
from desktop_rt.paths import data_dir
from desktop_rt.timestamps import now_iso

__all__ = [
    "HISTORY_FILE",
    "StoreError",
    "StoreDiskFullError",
    "StoreCorruptError",
    "TurnNotFoundError",
    "CorrectionError",
    "SessionRow",
    "TurnRow",
    "TranscriptStore",
    "history_path",
    "turn_words",
]

HISTORY_FILE = "history.sqlite3"
_SQLITE_FULL = 13
_SQLITE_DAMAGED = (11, 26)  # SQLITE_CORRUPT, SQLITE_NOTADB

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY,
    uid TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL DEFAULT '',
    started_at TEXT NOT NULL,
    ended_at TEXT,
    model TEXT,
    language TEXT,
    mode TEXT
);
CREATE TABLE IF NOT EXISTS turns (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    item_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    start REAL NOT NULL DEFAULT 0,
    "end" REAL,
    text TEXT NOT NULL DEFAULT '',
    completed INTEGER NOT NULL DEFAULT 0,
    speaker TEXT,
    original_text TEXT,
    translation TEXT NOT NULL DEFAULT '',
    probabilities TEXT,
    UNIQUE (session_id, item_id)
);
CREATE INDEX IF NOT EXISTS turns_by_session ON turns (session_id, seq);
"""


class StoreError(DesktopRtError):
    """The history database could not be read or written."""


class StoreDiskFullError(StoreError):
    """The disk (or the database's size limit) is full; nothing already saved is lost."""


class StoreCorruptError(StoreError):
    """The file is not a readable SQLite database (the writer moves it aside and starts anew)."""


class TurnNotFoundError(StoreError):
    """The turn to correct or revert is not in the history (deleted, or never saved)."""


class CorrectionError(StoreError, ValueError):
    """A correction that cannot be saved as given (an empty text); the turn is left as it was."""


def history_path() -> Path:
    return data_dir() / HISTORY_FILE


_ADDED_COLUMNS = (
    ("speaker", "TEXT"),
    ("original_text", "TEXT"),
    ("translation", "TEXT NOT NULL DEFAULT ''"),
    ("probabilities", "TEXT"),
)
"""Columns of ``turns`` added after the first release, in the order they came."""


def _add_missing_columns(db: sqlite3.Connection) -> None:
    """Migrate a history written before a column existed (old rows get NULL)."""
    have = {row[1] for row in db.execute("PRAGMA table_info(turns)")}
    for column, declaration in _ADDED_COLUMNS:
        if column not in have:
            db.execute(f"ALTER TABLE turns ADD COLUMN {column} {declaration}")


def _store_error(exc: sqlite3.Error, path: Path, doing: str) -> StoreError:
    code = getattr(exc, "sqlite_errorcode", None)
    if code == _SQLITE_FULL or "disk is full" in str(exc):
        return StoreDiskFullError(
            f"The disk is full, so the transcript could not be saved to {path} while {doing}. "
            "What was saved before is safe; free some space and new text is saved again."
        )
    if code is not None and code & 0xFF in _SQLITE_DAMAGED:
        return StoreCorruptError(f"The history database {path} is damaged ({exc}).")
    return StoreError(f"The history database {path} failed while {doing}: {exc}.")


class TranscriptStore:
    """One SQLite connection to the history file. See the module docstring."""

    def __init__(self, path: Path | str | None = None):
        self.path = Path(path) if path is not None else history_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=5.0)
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA foreign_keys=ON")
            with self._db:
                self._db.executescript(_SCHEMA)
                _add_missing_columns(self._db)
        except OSError as exc:
            raise StoreError(f"Could not open the history database {self.path}: {exc}.") from exc
        except sqlite3.Error as exc:
            raise _store_error(exc, self.path, "opening it") from exc

    def close(self) -> None:
        self._db.close()

    def limit_size(self, max_bytes: int) -> None:
        """Cap the database file at about ``max_bytes`` (a quota; beyond it writes fail as full)."""
        page = self._db.execute("PRAGMA page_size").fetchone()[0]
        self._db.execute(f"PRAGMA max_page_count = {max(1, int(max_bytes) // page)}")

    def __enter__(self) -> TranscriptStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, doing: str, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        try:
            with self._db:
                return self._db.execute(sql, params)
        except sqlite3.Error as exc:
            raise _store_error(exc, self.path, doing) from exc

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[sqlite3.Row]:
        try:
            return self._db.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise _store_error(exc, self.path, "reading the history") from exc

    # ---- writes ----------------------------------------------------------------------------

    def begin_session(
        self,
        uid: str,
        *,
        started_at: str | None = None,
        title: str = "",
        model: str | None = None,
        language: str | None = None,
        mode: str | None = None,
    ) -> int:
        """Create the session ``uid`` if it does not exist; returns its row id."""
        self._write(
            "starting a session",
            "INSERT INTO sessions (uid, title, started_at, model, language, mode) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (uid) DO NOTHING",
            (uid, title, started_at or now_iso(), model, language, mode),
        )
        return self._session_id(uid)

    def end_session(self, uid: str, ended_at: str | None = None) -> None:
        self._write(
            "ending a session",
            "UPDATE sessions SET ended_at = ? WHERE uid = ?",
            (ended_at or now_iso(), uid),
        )

    def save_turn(
        self,
        uid: str,
        item_id: str,
        *,
        text: str | None = None,
        start: float | None = None,
        end: float | None = None,
        completed: bool | None = None,
        speaker: str | None = None,
        translation: str | None = None,
        probabilities: Sequence[float | None] | None = None,
    ) -> None:
        """Create or update one turn; fields left ``None`` keep their stored value. ``text`` is
        the recognizer's: on a corrected turn it replaces ``original_text``, not the correction."""
        session_id = self._session_id(uid)
        done = None if completed is None else int(completed)
        probs = None if probabilities is None else encode_probabilities(probabilities)
        self._write(
            "saving a turn",
            'INSERT INTO turns (session_id, item_id, seq, start, "end", text, completed, speaker, '
            "translation, probabilities) "
            "VALUES (?1, ?2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM turns WHERE session_id = ?1), "
            "COALESCE(?3, 0), ?4, COALESCE(?5, ''), COALESCE(?6, 0), ?7, COALESCE(?8, ''), ?9) "
            "ON CONFLICT (session_id, item_id) DO UPDATE SET "
            'start = COALESCE(?3, start), "end" = COALESCE(?4, "end"), '
            "text = CASE WHEN original_text IS NULL THEN COALESCE(?5, text) ELSE text END, "
            "original_text = CASE WHEN original_text IS NULL THEN NULL "
            "ELSE COALESCE(?5, original_text) END, "
            "completed = COALESCE(?6, completed), speaker = COALESCE(?7, speaker), "
            "translation = COALESCE(?8, translation), probabilities = COALESCE(?9, probabilities)",
            (session_id, item_id, start, end, text, done, speaker, translation, probs),
        )

    def turn_id(self, uid: str, item_id: str) -> int:
        """The row id of the turn ``item_id`` of the session ``uid``."""
        rows = self._read(
            "SELECT t.id FROM turns t JOIN sessions s ON s.id = t.session_id "
            "WHERE s.uid = ? AND t.item_id = ?",
            (uid, item_id),
        )
        if not rows:
            raise TurnNotFoundError(f"There is no turn {item_id!r} of session {uid!r} to correct.")
        return int(rows[0]["id"])

    def correct_turn(self, turn_id: int, text: str) -> None:
        """Show ``text`` for the turn from now on, keeping the recognizer's text to revert to
        (a correction back to exactly that text reverts). An empty text is refused."""
        text = " ".join(text.split())
        if not text:
            raise CorrectionError(
                "A correction cannot be empty; the turn keeps its text. "
                "To go back to what was recognised, revert the correction instead."
            )
        rows = self._read("SELECT text, original_text FROM turns WHERE id = ?", (turn_id,))
        if not rows:
            raise TurnNotFoundError(f"The turn {turn_id} is no longer in the history.")
        recognised = rows[0]["original_text"] or rows[0]["text"]
        if " ".join(recognised.split()) == text:  # back to what was recognised: a revert
            self.revert_turn(turn_id)
            return
        self._write(
            "saving a correction",
            "UPDATE turns SET text = ?2, original_text = ?3 WHERE id = ?1",
            (turn_id, text, recognised),
        )

    def revert_turn(self, turn_id: int) -> None:
        """Show the recognizer's text again (nothing changes for a turn never corrected)."""
        cursor = self._write(
            "reverting a correction",
            "UPDATE turns SET text = COALESCE(original_text, text), original_text = NULL "
            "WHERE id = ?",
            (turn_id,),
        )
        if cursor.rowcount == 0:
            raise TurnNotFoundError(f"The turn {turn_id} is no longer in the history.")

    def set_session_mode(self, uid: str, mode: str) -> None:
        """Record the modes a session used (comma-separated, in order of first use)."""
        self._write(
            "recording a session's mode", "UPDATE sessions SET mode = ? WHERE uid = ?", (mode, uid)
        )

    def rename_session(self, session_id: int, title: str) -> None:
        self._write(
            "renaming a session",
            "UPDATE sessions SET title = ? WHERE id = ?",
            (title.strip(), session_id),
        )

    def delete_session(self, session_id: int) -> None:
        self._write("deleting a session", "DELETE FROM sessions WHERE id = ?", (session_id,))

    # ---- reads -----------------------------------------------------------------------------

    def _session_id(self, uid: str) -> int:
        rows = self._read("SELECT id FROM sessions WHERE uid = ?", (uid,))
        if not rows:
            raise StoreError(f"There is no session {uid!r} in the history.")
        return int(rows[0]["id"])

    _SESSION_COLUMNS = (
        "s.id, s.uid, s.title, s.started_at, s.ended_at, s.model, s.language, s.mode, "
        "(SELECT COUNT(*) FROM turns t WHERE t.session_id = s.id) AS turn_count, "
        "COALESCE((SELECT substr(group_concat(text, ' '), 1, 120) FROM "
        "(SELECT text FROM turns t WHERE t.session_id = s.id AND text != '' ORDER BY seq LIMIT 3)), '') AS preview"
    )

    @staticmethod
    def _session_row(row: sqlite3.Row) -> SessionRow:
        return SessionRow(**dict(zip(row.keys(), row, strict=True)))  # a Row iterates values

    def sessions(self, limit: int = 500, offset: int = 0) -> list[SessionRow]:
        """Sessions, newest first, with their turn count and the start of their text."""
        rows = self._read(
            f"SELECT {self._SESSION_COLUMNS} FROM sessions s ORDER BY s.started_at DESC, s.id DESC LIMIT ? OFFSET ?",
            (limit, offset),
        )
        return [self._session_row(r) for r in rows]

    def session(self, session_id: int) -> SessionRow | None:
        rows = self._read(
            f"SELECT {self._SESSION_COLUMNS} FROM sessions s WHERE s.id = ?", (session_id,)
        )
        return self._session_row(rows[0]) if rows else None

    def search(self, query: str, limit: int = 500) -> list[SessionRow]:
        """Sessions whose title, any turn or any turn's translation contains ``query``
        (case-insensitive for ASCII; a corrected turn is found by its correction)."""
        query = query.strip()
        if not query:
            return self.sessions(limit)
        pattern = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self._read(
            f"SELECT {self._SESSION_COLUMNS} FROM sessions s WHERE s.title LIKE ?1 ESCAPE '\\' OR EXISTS "
            "(SELECT 1 FROM turns t WHERE t.session_id = s.id AND (t.text LIKE ?1 ESCAPE '\\' "
            "OR t.translation LIKE ?1 ESCAPE '\\')) "
            "ORDER BY s.started_at DESC, s.id DESC LIMIT ?2",
            (pattern, limit),
        )
        return [self._session_row(r) for r in rows]

    def turns(self, session_id: int) -> list[TurnRow]:
        rows = self._read(
            'SELECT id, session_id, item_id, seq, start, "end", text, completed, speaker, '
            "original_text, translation, probabilities "
            "FROM turns WHERE session_id = ? ORDER BY seq",
            (session_id,),
        )
        return [
            TurnRow(
                r["id"],
                r["session_id"],
                r["item_id"],
                r["seq"],
                r["start"],
                r["end"],
                r["text"],
                bool(r["completed"]),
                r["speaker"],
                r["original_text"],
                r["translation"] or "",
                decode_probabilities(r["probabilities"]),
            )
            for r in rows
        ]

    def transcript(self, session_id: int) -> Transcript:
        """The session as an export :class:`Transcript` (see
        :func:`~desktop_rt.history.session_transcript.build_transcript`)."""
        row = self.session(session_id)
        if row is None:
            raise StoreError(f"There is no session {session_id} in the history.")
        return build_transcript(row, self.turns(session_id))

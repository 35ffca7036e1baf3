"""Transcript history in SQLite (``<data dir>/history.sqlite3``), saved as it is produced.

Two tables: ``sessions`` (one row per recording session, keyed by a ``uid`` the caller makes)
and ``turns`` (one row per conversation item, keyed by ``(session, item_id)``). Every write is
idempotent (it sets a turn's whole committed text, never appends), so a failed write can be
retried as it is. A turn's ``speaker`` labels its stream in meeting mode ("You", "Others"; NULL
for a one-stream session); files from before it had the column get it when opened. WAL mode with ``synchronous=NORMAL``: a crash of the process loses nothing
written. A :class:`TranscriptStore` is one connection, used only by the thread that opened it;
:class:`~desktop_rt.history.writer.StoreWriter` and :class:`~desktop_rt.history.worker.HistoryWorker`
each own one on a thread of their own.
"""

from __future__ import annotations

import itertools
import sqlite3
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from desktop_rt.core_types import Word
from desktop_rt.errors import DesktopRtError
from desktop_rt.history.speech_text import clean_speech_text
from desktop_rt.history.transcript import Segment, Transcript, segments_from_words
from desktop_rt.paths import data_dir
from desktop_rt.timestamps import now_iso

__all__ = [
    "HISTORY_FILE",
    "StoreError",
    "StoreDiskFullError",
    "StoreCorruptError",
    "SessionRow",
    "TurnRow",
    "TranscriptStore",
    "history_path",
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


def history_path() -> Path:
    return data_dir() / HISTORY_FILE


@dataclass(frozen=True)
class SessionRow:
    id: int
    uid: str
    title: str
    started_at: str
    ended_at: str | None
    model: str | None
    language: str | None
    mode: str | None
    turn_count: int = 0
    preview: str = ""

    @property
    def modes(self) -> tuple[str, ...]:
        """The modes the session used, in order of first use (``mode`` holds them joined by ",")."""
        return tuple(m for m in (self.mode or "").split(",") if m)

    @property
    def display_title(self) -> str:
        return self.title or f"Session {self.started_at[:16].replace('T', ' ')}"


@dataclass(frozen=True)
class TurnRow:
    id: int
    session_id: int
    item_id: str
    seq: int
    start: float
    end: float | None
    text: str
    completed: bool
    speaker: str | None = None


def _add_missing_columns(db: sqlite3.Connection) -> None:
    """Migrate a history written before a column existed (old rows get NULL)."""
    have = {row[1] for row in db.execute("PRAGMA table_info(turns)")}
    if "speaker" not in have:
        db.execute("ALTER TABLE turns ADD COLUMN speaker TEXT")


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
    ) -> None:
        """Create or update one turn; fields left ``None`` keep their stored value."""
        session_id = self._session_id(uid)
        done = None if completed is None else int(completed)
        self._write(
            "saving a turn",
            'INSERT INTO turns (session_id, item_id, seq, start, "end", text, completed, speaker) '
            "VALUES (?1, ?2, (SELECT COALESCE(MAX(seq), 0) + 1 FROM turns WHERE session_id = ?1), "
            "COALESCE(?3, 0), ?4, COALESCE(?5, ''), COALESCE(?6, 0), ?7) "
            "ON CONFLICT (session_id, item_id) DO UPDATE SET "
            'start = COALESCE(?3, start), "end" = COALESCE(?4, "end"), '
            "text = COALESCE(?5, text), completed = COALESCE(?6, completed), "
            "speaker = COALESCE(?7, speaker)",
            (session_id, item_id, start, end, text, done, speaker),
        )

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
        """Sessions whose title or any turn contains ``query`` (case-insensitive for ASCII)."""
        query = query.strip()
        if not query:
            return self.sessions(limit)
        pattern = "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self._read(
            f"SELECT {self._SESSION_COLUMNS} FROM sessions s WHERE s.title LIKE ?1 ESCAPE '\\' OR EXISTS "
            "(SELECT 1 FROM turns t WHERE t.session_id = s.id AND t.text LIKE ?1 ESCAPE '\\') "
            "ORDER BY s.started_at DESC, s.id DESC LIMIT ?2",
            (pattern, limit),
        )
        return [self._session_row(r) for r in rows]

    def turns(self, session_id: int) -> list[TurnRow]:
        rows = self._read(
            'SELECT id, session_id, item_id, seq, start, "end", text, completed, speaker '
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
            )
            for r in rows
        ]

    def transcript(self, session_id: int) -> Transcript:
        """The session as an export :class:`Transcript` (segments with estimated word times).

        Turns of labelled streams (meeting mode) are put in time order, and a cue never mixes
        speakers: each run of one speaker's turns is cut into cues of its own."""
        row = self.session(session_id)
        if row is None:
            raise StoreError(f"There is no session {session_id} in the history.")
        turns = self.turns(session_id)
        if any(t.speaker for t in turns):
            turns.sort(key=lambda t: (t.start, t.seq))
        segments: list[Segment] = []
        for speaker, run in itertools.groupby(turns, key=lambda t: t.speaker):
            words: list[Word] = []
            for turn in run:
                words.extend(turn_words(turn))
            segments.extend(replace(s, speaker=speaker) for s in segments_from_words(words))
        return Transcript(tuple(segments), row.display_title, row.language, row.started_at)


def turn_words(turn: TurnRow) -> list[Word]:
    """A turn's words with times spread over the turn by length (deltas carry no word times).

    Non-speech output saved by older versions (sound tags, runs of punctuation) is left out."""
    pieces = [(" " + w) for w in clean_speech_text(turn.text).split()]
    if not pieces:
        return []
    chars = sum(len(p) for p in pieces)
    start = max(0.0, turn.start)
    end = turn.end if turn.end is not None and turn.end > start else start + 0.065 * chars
    span = end - start
    words, t = [], start
    for piece in pieces:
        dt = span * len(piece) / chars
        words.append(Word(piece, round(t, 3), round(t + dt, 3)))
        t += dt
    return words

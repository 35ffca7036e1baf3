"""A damaged history file: moved aside with a timestamp, and what SQLite can still read copied back.

:func:`move_aside` renames ``history.sqlite3`` (with its ``-wal`` and ``-shm``) to
``history.sqlite3.damaged-<time>``; :func:`recover_history` then copies every session and turn
that can be read from that copy into a (new) history, skipping unreadable rows, with what the
copy's schema has of each turn's speaker, translation, word probabilities and correction (the
recognised text stays revertible). Recovery is idempotent: run twice, it adds nothing. ``python -m desktop_rt.history.recover FILE`` runs it
into the user's history.
"""

from __future__ import annotations

import sqlite3
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop_rt.history.confidence import decode_probabilities
from desktop_rt.history.store import StoreError, TranscriptStore

__all__ = ["Recovered", "move_aside", "recover_history", "rotated_message", "main"]

_SIDECARS = ("-wal", "-shm", "-journal")
_SESSION_FIELDS = "id, uid, title, started_at, ended_at, model, language, mode"
_TURN_FIELDS = 'item_id, seq, start, "end", text, completed'
_LATER_TURN_FIELDS = ("speaker", "original_text", "translation", "probabilities")
"""Columns a copy has when it was written by a version that had them."""


@dataclass(frozen=True)
class Recovered:
    """What :func:`recover_history` copied, and the sessions it could not read at all."""

    sessions: int
    turns: int
    unreadable: int


def move_aside(path: Path) -> Path:
    """Rename the damaged ``path`` (and its sidecar files) beside it; returns the new name."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.damaged-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.damaged-{stamp}-{n}")
    path.replace(target)
    for suffix in _SIDECARS:
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.replace(target.with_name(target.name + suffix))
    return target


def rotated_message(moved: Path, recovered: bool = False) -> str:
    """What to tell the user, once, after a damaged history was moved aside as ``moved``."""
    if recovered:
        return (
            f"The history file was damaged: it was moved aside as {moved.name}, and a new "
            "history holds what could still be read from it. New text is saved again."
        )
    return (
        f"The history file was damaged: it was moved aside as {moved.name} and a new history "
        "was started, so new sessions are saved. To copy back what can still be read, run: "
        f'python -m desktop_rt.history.recover "{moved}"'
    )


def _rows(
    db: sqlite3.Connection, table: str, fields: str, where: str = ""
) -> Iterator[tuple[Any, ...]]:
    """Rows of ``table``, one rowid at a time when a full scan hits a damaged page."""
    try:
        yield from db.execute(f"SELECT {fields} FROM {table} {where} ORDER BY rowid").fetchall()
        return
    except sqlite3.DatabaseError:
        pass
    try:
        top = db.execute(f"SELECT max(rowid) FROM {table}").fetchone()[0] or 0
    except sqlite3.DatabaseError:
        return
    for rowid in range(1, top + 1):
        clause = f"{where} AND rowid = ?" if where else "WHERE rowid = ?"
        try:
            yield from db.execute(f"SELECT {fields} FROM {table} {clause}", (rowid,)).fetchall()
        except sqlite3.DatabaseError:
            continue


def _later_fields(db: sqlite3.Connection) -> tuple[str, ...]:
    try:
        have = {row[1] for row in db.execute("PRAGMA table_info(turns)")}
    except sqlite3.DatabaseError:
        return ()
    return tuple(f for f in _LATER_TURN_FIELDS if f in have)


def _copy_turn(
    into: TranscriptStore, uid: str, row: tuple[Any, ...], later: dict[str, Any]
) -> None:
    item_id, _seq, start, end, text, completed = row[:6]
    original = later.get("original_text")
    into.save_turn(
        uid,
        item_id,
        text=original if original is not None else text,
        start=start,
        end=end,
        completed=bool(completed),
        speaker=later.get("speaker"),
        translation=later.get("translation"),
        probabilities=decode_probabilities(later.get("probabilities")) or None,
    )
    if original is not None and str(text).strip():
        into.correct_turn(into.turn_id(uid, item_id), text)


def recover_history(damaged: Path, into: TranscriptStore) -> Recovered:
    """Copy the readable sessions and turns of ``damaged`` into ``into``.

    Raises :class:`StoreError` when ``damaged`` is not an SQLite database at all.
    """
    try:
        db = sqlite3.connect(f"file:{damaged}?mode=ro", uri=True)
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"Nothing can be read from {damaged}: {exc}.") from exc
    sessions = turns = unreadable = 0
    try:
        later = _later_fields(db)
        fields = ", ".join((_TURN_FIELDS, *later))
        for sid, uid, title, started, ended, model, language, mode in _rows(
            db, "sessions", _SESSION_FIELDS
        ):
            try:
                found = list(_rows(db, "turns", fields, f"WHERE session_id = {int(sid)}"))
            except sqlite3.DatabaseError:
                unreadable += 1
                continue
            into.begin_session(
                uid, started_at=started, title=title, model=model, language=language, mode=mode
            )
            if ended:
                into.end_session(uid, ended)
            for row in sorted(found, key=lambda r: r[1]):
                _copy_turn(into, uid, row, dict(zip(later, row[6:], strict=True)))
            sessions += 1
            turns += len(found)
    finally:
        db.close()
    return Recovered(sessions, turns, unreadable)


def main(argv: list[str] | None = None) -> int:
    """``python -m desktop_rt.history.recover DAMAGED [HISTORY]``: recover into the history."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2):
        print("usage: python -m desktop_rt.history.recover DAMAGED_FILE [HISTORY_FILE]")
        return 2
    try:
        with TranscriptStore(args[1] if len(args) == 2 else None) as store:
            got = recover_history(Path(args[0]), store)
    except StoreError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"Recovered {got.sessions} sessions ({got.turns} turns) into {store.path}.")
    if got.unreadable:
        print(f"{got.unreadable} sessions could not be read.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

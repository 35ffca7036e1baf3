"""A damaged history: moved aside with a timestamp, a fresh one started, the readable rest recovered."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from desktop_rt.history.recover import main, move_aside, recover_history
from desktop_rt.history.store import StoreError, TranscriptStore
from desktop_rt.history.writer import StoreWriter

SESSIONS = 120


def _filled_history(path: Path) -> dict[str, list[str]]:
    """A real history: SESSIONS sessions of 4 turns with long text (hundreds of pages)."""
    texts: dict[str, list[str]] = {}
    with TranscriptStore(path) as store:
        for n in range(SESSIONS):
            uid = f"s{n:03d}"
            store.begin_session(uid, title=f"talk {n}", model="whisper-base", mode="hands_free")
            texts[uid] = [f"session {n} turn {k} " + "words " * 60 for k in range(4)]
            for k, text in enumerate(texts[uid]):
                store.save_turn(uid, f"i{k}", text=text, start=k, end=k + 1.0, completed=True)
            store.end_session(uid)
    db = sqlite3.connect(path)  # fold the WAL into the file, so damage to it is damage
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return texts


def _damage_pages(path: Path, first: int, count: int) -> None:
    page = 4096
    with open(path, "r+b") as f:
        f.seek(first * page)
        f.write(os.urandom(count * page))


def test_readable_sessions_and_turns_are_recovered_from_a_damaged_file(tmp_path):
    path = tmp_path / "history.sqlite3"
    texts = _filled_history(path)
    pages = path.stat().st_size // 4096
    _damage_pages(path, pages // 2, 8)
    with TranscriptStore(tmp_path / "new.sqlite3") as fresh:
        got = recover_history(path, fresh)
        rows = fresh.sessions(limit=1000)
        assert got.sessions == len(rows) and SESSIONS // 2 <= got.sessions <= SESSIONS
        for row in rows:
            saved = [t.text for t in fresh.turns(row.id)]
            assert saved == texts[row.uid][: len(saved)]  # what came back is what was said
            assert row.title and row.ended_at and row.model == "whisper-base"
        assert got.turns == sum(len(fresh.turns(r.id)) for r in rows)
        assert got.turns < SESSIONS * 4  # the damaged pages really were lost
        again = recover_history(path, fresh)  # idempotent: nothing doubled
        assert again.sessions == got.sessions
        assert len(fresh.sessions(limit=1000)) == len(rows)
        assert sum(len(fresh.turns(r.id)) for r in rows) == got.turns


def test_garbage_history_is_moved_aside_and_new_sessions_are_saved(tmp_path):
    path = tmp_path / "history.sqlite3"
    garbage = os.urandom(64 * 1024)
    path.write_bytes(garbage)
    writer = StoreWriter(path)
    try:
        assert writer.damaged_copy is not None and writer.damaged_copy.read_bytes() == garbage
        assert writer.damaged_copy.name.startswith("history.sqlite3.damaged-")
        writer.begin_session("new")
        writer.save_turn("new", "i0", text=" saved after all")
        assert writer.flush()
    finally:
        writer.close()
    with TranscriptStore(path) as store:
        (row,) = store.sessions()
        assert [t.text for t in store.turns(row.id)] == [" saved after all"]
    # A second start finds a good file: nothing is moved again.
    again = StoreWriter(path)
    again.close()
    assert again.damaged_copy is None
    assert len(list(tmp_path.glob("history.sqlite3.damaged-*"))) == 1


def test_history_damaged_while_running_is_rotated_and_recovered(tmp_path):
    path = tmp_path / "history.sqlite3"
    texts = _filled_history(path)
    rotated: list[Path] = []
    errors: list[StoreError] = []
    writer = StoreWriter(path, on_error=errors.append, on_rotated=rotated.append)
    try:
        writer.begin_session("s000")
        assert writer.flush()
        pages = path.stat().st_size // 4096
        _damage_pages(path, 1, pages - 1)  # every page but the schema's
        writer.begin_session("live")
        for k in range(3):
            writer.save_turn("live", f"i{k}", text=f" live {k}")
        assert writer.flush()
    finally:
        writer.close()
    assert errors == [] and len(rotated) == 1 and rotated[0].exists()
    with TranscriptStore(path) as store:
        live = [r for r in store.sessions(limit=1000) if r.uid == "live"]
        assert [t.text for t in store.turns(live[0].id)] == [" live 0", " live 1", " live 2"]
    assert texts  # the old sessions were on the damaged pages: recovery found what it could


def test_recover_command_copies_into_the_history(tmp_path, capsys):
    path = tmp_path / "history.sqlite3"
    _filled_history(path)
    moved = move_aside(path)
    assert not path.exists() and moved.exists()
    assert main([str(moved), str(path)]) == 0
    assert f"Recovered {SESSIONS} sessions ({SESSIONS * 4} turns)" in capsys.readouterr().out
    (tmp_path / "junk").write_bytes(b"\0" * 10000)
    assert main([str(tmp_path / "junk"), str(path)]) == 1


def test_unreadable_file_is_a_store_error(tmp_path):
    junk = tmp_path / "junk"
    junk.write_bytes(os.urandom(8192))
    with TranscriptStore(tmp_path / "new.sqlite3") as fresh, pytest.raises(StoreError):
        recover_history(junk, fresh)

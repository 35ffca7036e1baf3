"""Speaker labels in the history (meeting mode), and files from before the column existed."""

from __future__ import annotations

import sqlite3

from desktop_rt.history.store import TranscriptStore

OLD_SCHEMA = """
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY, uid TEXT NOT NULL UNIQUE, title TEXT NOT NULL DEFAULT '',
    started_at TEXT NOT NULL, ended_at TEXT, model TEXT, language TEXT, mode TEXT
);
CREATE TABLE turns (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    item_id TEXT NOT NULL, seq INTEGER NOT NULL, start REAL NOT NULL DEFAULT 0, "end" REAL,
    text TEXT NOT NULL DEFAULT '', completed INTEGER NOT NULL DEFAULT 0,
    UNIQUE (session_id, item_id)
);
INSERT INTO sessions (uid, started_at, mode) VALUES ('old', '2025-01-01T10:00:00', 'push_to_talk');
INSERT INTO turns (session_id, item_id, seq, start, "end", text, completed)
    VALUES (1, 'item_a', 1, 0.0, 2.0, 'Written before speakers.', 1);
"""


def test_a_history_from_before_speakers_opens_reads_and_takes_new_labelled_turns(tmp_path):
    path = tmp_path / "history.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
    db.close()
    with TranscriptStore(path) as store:
        [session] = store.sessions()
        [turn] = store.turns(session.id)
        assert turn.text == "Written before speakers." and turn.speaker is None
        assert store.transcript(session.id).segments[0].speaker is None
        store.begin_session("new")
        store.save_turn("new", "item_b", text="Hello.", start=0.0, end=1.0, speaker="You")
        new = store.sessions()[0]
        assert [t.speaker for t in store.turns(new.id)] == ["You"]
    with TranscriptStore(path) as again:  # migrating twice is a no-op
        assert len(again.sessions()) == 2


def test_later_updates_keep_the_speaker_and_cues_never_mix_speakers(tmp_path):
    with TranscriptStore(tmp_path / "history.sqlite3") as store:
        sid = store.begin_session("meet")
        store.save_turn(
            "meet", "item_o", text="Welcome to the call", start=0.0, end=2.0, speaker="Others"
        )
        store.save_turn("meet", "item_y", text="Thanks", start=2.1, end=2.6, speaker="You")
        store.save_turn(
            "meet", "item_o2", text="Let us begin.", start=2.8, end=4.0, speaker="Others"
        )
        store.save_turn("meet", "item_early", text="Hi all.", start=-0.5, speaker="You")
        store.save_turn("meet", "item_y", text="Thanks for having me.", completed=True)
        assert [t.speaker for t in store.turns(sid)] == ["Others", "You", "Others", "You"]
        segments = store.transcript(sid).segments
    assert [(s.speaker, s.text) for s in segments] == [
        ("You", "Hi all."),
        ("Others", "Welcome to the call"),
        ("You", "Thanks for having me."),
        ("Others", "Let us begin."),
    ]

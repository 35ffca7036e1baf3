"""History store: write-through turns, browse/search/rename/delete, export, disk full."""

from __future__ import annotations

import sqlite3

import pytest

from desktop_rt.history.export import to_srt, to_txt
from desktop_rt.history.store import (
    StoreDiskFullError,
    StoreError,
    TranscriptStore,
    history_path,
    turn_words,
)


@pytest.fixture
def store(tmp_path):
    with TranscriptStore(tmp_path / "history.sqlite3") as s:
        yield s


def test_default_file_lives_in_the_data_dir(isolated_dirs):
    assert history_path().parent == isolated_dirs / "data"


def test_file_is_in_wal_mode(store):
    db = sqlite3.connect(store.path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()


def test_turns_are_written_through_and_visible_to_another_connection(store):
    store.begin_session("s1", model="whisper-base", mode="push_to_talk")
    store.save_turn("s1", "item_a", start=0.5, text=" Ever tried.")
    with TranscriptStore(store.path) as reader:  # a second connection sees it at once
        [row] = reader.sessions()
        assert row.turn_count == 1 and row.preview == " Ever tried."
        [turn] = reader.turns(row.id)
        assert (turn.item_id, turn.start, turn.end, turn.completed) == ("item_a", 0.5, None, False)
    store.save_turn("s1", "item_a", text=" Ever tried. Ever failed.", end=3.0, completed=True)
    [turn] = store.turns(store.sessions()[0].id)
    assert turn.text == " Ever tried. Ever failed." and turn.start == 0.5 and turn.completed


def test_turn_order_follows_first_appearance(store):
    store.begin_session("s1")
    for item in ("b", "a", "c"):
        store.save_turn("s1", item, text=item)
    store.save_turn("s1", "b", text="b2")
    sid = store.sessions()[0].id
    assert [(t.item_id, t.seq, t.text) for t in store.turns(sid)] == [
        ("b", 1, "b2"),
        ("a", 2, "a"),
        ("c", 3, "c"),
    ]


def test_begin_session_is_idempotent_and_unknown_session_is_an_error(store):
    a = store.begin_session("s1", title="first")
    assert store.begin_session("s1", title="other") == a
    assert store.sessions()[0].title == "first"
    with pytest.raises(StoreError, match="no session"):
        store.save_turn("nope", "x", text="y")


def test_browse_search_rename_delete(store):
    store.begin_session("s1", started_at="2026-01-01T10:00:00+00:00")
    store.save_turn("s1", "i1", text=" The quick brown fox")
    store.begin_session("s2", started_at="2026-01-02T10:00:00+00:00")
    store.save_turn("s2", "i1", text=" 100% sure_thing")
    s2, s1 = store.sessions()
    assert (s2.uid, s1.uid) == ("s2", "s1")  # newest first
    assert [r.uid for r in store.search("QUICK")] == ["s1"]
    assert [r.uid for r in store.search("100%")] == ["s2"]
    assert store.search("0%_") == [] and [r.uid for r in store.search("%")] == [
        "s2"
    ]  # LIKE chars are literal
    assert len(store.search("  ")) == 2
    store.rename_session(s1.id, "  Standup  ")
    assert store.session(s1.id).display_title == "Standup"
    assert [r.uid for r in store.search("standup")] == ["s1"]
    assert s2.display_title.startswith("Session 2026-01-02 10:00")
    store.delete_session(s1.id)
    assert [r.uid for r in store.sessions()] == ["s2"]
    assert store.turns(s1.id) == []  # turns went with it


def test_transcript_builds_timed_segments(store):
    store.begin_session("s1", language="en")
    store.save_turn(
        "s1", "i1", text=" Ever tried. Ever failed.", start=1.0, end=3.0, completed=True
    )
    store.save_turn("s1", "i2", text=" No matter.", start=6.0, end=7.0, completed=True)
    store.save_turn("s1", "i3", text="", start=8.0)
    t = store.transcript(store.sessions()[0].id)
    assert [s.text for s in t.segments] == ["Ever tried.", "Ever failed.", "No matter."]
    assert t.segments[0].start == 1.0 and t.segments[1].end == pytest.approx(3.0)
    assert t.segments[2].start == 6.0 and t.language == "en"
    assert to_txt(t) == "Ever tried. Ever failed.\n\nNo matter.\n"
    assert "00:00:06,000 --> 00:00:07,000" in to_srt(t)
    with pytest.raises(StoreError):
        store.transcript(999)


def test_turn_words_without_an_end_get_a_plausible_span(store):
    store.begin_session("s1")
    store.save_turn("s1", "i1", text=" one two", start=2.0)
    [turn] = store.turns(store.sessions()[0].id)
    words = turn_words(turn)
    assert [w.text for w in words] == [" one", " two"]
    assert words[0].start == 2.0 and words[-1].end > 2.0


def test_disk_full_is_a_clear_error_and_nothing_written_is_lost(store):
    store.begin_session("s1")
    store.save_turn("s1", "i1", text=" kept", completed=True)
    store.limit_size(store.path.stat().st_size)
    with pytest.raises(StoreDiskFullError, match="disk is full.*safe"):
        for n in range(200):
            store.save_turn("s1", f"big{n}", text="x" * 4000)
    with TranscriptStore(store.path) as reader:
        texts = [t.text for t in reader.turns(reader.sessions()[0].id)]
    assert texts[0] == " kept"

"""Corrections, translations and word probabilities in the history, on real SQLite files."""

from __future__ import annotations

import json
import sqlite3

import pytest

from desktop_rt.history.export import export, from_json
from desktop_rt.history.store import CorrectionError, TranscriptStore, TurnNotFoundError

SPEAKERS_SCHEMA = """
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY, uid TEXT NOT NULL UNIQUE, title TEXT NOT NULL DEFAULT '',
    started_at TEXT NOT NULL, ended_at TEXT, model TEXT, language TEXT, mode TEXT
);
CREATE TABLE turns (
    id INTEGER PRIMARY KEY,
    session_id INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    item_id TEXT NOT NULL, seq INTEGER NOT NULL, start REAL NOT NULL DEFAULT 0, "end" REAL,
    text TEXT NOT NULL DEFAULT '', completed INTEGER NOT NULL DEFAULT 0, speaker TEXT,
    UNIQUE (session_id, item_id)
);
CREATE INDEX turns_by_session ON turns (session_id, seq);
INSERT INTO sessions (uid, started_at, mode) VALUES ('old', '2025-01-01T10:00:00', 'hands_free');
INSERT INTO turns (session_id, item_id, seq, start, "end", text, completed, speaker)
    VALUES (1, 'item_a', 1, 0.0, 2.0, 'Written before corrections.', 1, NULL);
"""


@pytest.fixture
def store(tmp_path):
    with TranscriptStore(tmp_path / "history.sqlite3") as s:
        yield s


def test_a_history_of_the_previous_schema_opens_and_takes_corrections_and_translations(tmp_path):
    path = tmp_path / "history.sqlite3"
    with sqlite3.connect(path) as db:
        db.executescript(SPEAKERS_SCHEMA)
    db.close()
    with TranscriptStore(path) as store:
        [session] = store.sessions()
        [turn] = store.turns(session.id)
        assert turn.text == "Written before corrections."
        assert (turn.original_text, turn.translation, turn.probabilities) == (None, "", ())
        store.correct_turn(turn.id, "Written before the corrections.")
        store.save_turn("old", "item_a", translation="Before corrections.")
        [turn] = store.turns(session.id)
        assert turn.text == "Written before the corrections." and turn.corrected
        assert turn.original_text == "Written before corrections."
        assert turn.translation == "Before corrections."
    columns = {row[1] for row in sqlite3.connect(path).execute("PRAGMA table_info(turns)")}
    assert {"original_text", "translation", "probabilities", "speaker"} <= columns
    with TranscriptStore(path) as again:  # migrating twice is a no-op and keeps the data
        [turn] = again.turns(again.sessions()[0].id)
        assert turn.text == "Written before the corrections."


def test_a_correction_is_shown_searched_and_exported_and_reverts_to_the_original(store):
    sid = store.begin_session("s")
    store.save_turn("s", "i1", text="The whether is fine.", start=0.0, end=2.0, completed=True)
    store.save_turn("s", "i2", text="See you.", start=3.0, end=4.0, completed=True)
    first = store.turns(sid)[0]
    store.correct_turn(first.id, "  The weather   is fine. ")
    corrected = store.turns(sid)[0]
    assert corrected.text == "The weather is fine." and corrected.original_text == first.text
    assert [r.id for r in store.search("weather")] == [sid]
    assert store.search("whether") == []  # the recognizer's text is kept, not searched
    assert store.sessions()[0].preview.startswith("The weather is fine.")
    for fmt in ("txt", "srt", "vtt", "json", "md"):
        out = export(store.transcript(sid), fmt)
        assert "weather" in out and "whether" not in out, fmt
    store.correct_turn(corrected.id, "The weather is great.")  # a second correction
    assert store.turns(sid)[0].original_text == "The whether is fine."  # still the recognizer's
    store.revert_turn(corrected.id)
    reverted = store.turns(sid)[0]
    assert reverted.text == "The whether is fine." and not reverted.corrected
    store.correct_turn(reverted.id, "The weather is fine.")
    store.correct_turn(reverted.id, " The  whether is fine.")  # back to the original: reverted
    assert not store.turns(sid)[0].corrected


def test_bad_corrections_get_clear_errors_and_change_nothing(store):
    sid = store.begin_session("s")
    store.save_turn("s", "i1", text="Keep me.", completed=True)
    turn = store.turns(sid)[0]
    with pytest.raises(CorrectionError, match="cannot be empty"):
        store.correct_turn(turn.id, "  \n ")
    assert store.turns(sid)[0].text == "Keep me." and not store.turns(sid)[0].corrected
    with pytest.raises(TurnNotFoundError):
        store.correct_turn(turn.id + 99, "Nobody")
    with pytest.raises(TurnNotFoundError):
        store.revert_turn(turn.id + 99)
    with pytest.raises(TurnNotFoundError):
        store.turn_id("s", "missing")
    store.revert_turn(turn.id)  # never corrected: nothing changes
    assert store.turns(sid)[0].text == "Keep me."


def test_a_late_recognizer_write_never_overwrites_a_correction(store):
    sid = store.begin_session("s")
    store.save_turn("s", "i1", text="Hello wold", probabilities=[0.9, 0.2])
    turn_id = store.turn_id("s", "i1")
    store.correct_turn(turn_id, "Hello world")
    store.save_turn("s", "i1", text="Hello wold.", completed=True, probabilities=[0.9, 0.3])
    [turn] = store.turns(sid)
    assert turn.text == "Hello world" and turn.original_text == "Hello wold."
    assert turn.probabilities == (0.9, 0.3) and turn.shown_probabilities == ()
    store.revert_turn(turn_id)
    [turn] = store.turns(sid)
    assert turn.text == "Hello wold." and turn.shown_probabilities == (0.9, 0.3)


def test_word_probabilities_are_saved_and_reach_the_json_export(store):
    sid = store.begin_session("s")
    store.save_turn(
        "s", "i1", text="Fairly sure, maybe", start=0.0, end=2.0, probabilities=[0.98, 0.91, 0.3]
    )
    doc = json.loads(export(store.transcript(sid), "json"))
    probabilities = [w["probability"] for s in doc["segments"] for w in s["words"]]
    assert probabilities == [0.98, 0.91, 0.3]
    store.save_turn("s", "i1", text="Fairly sure, maybe more")  # no probabilities: kept as saved
    assert store.turns(sid)[0].probabilities == (0.98, 0.91, 0.3)
    doc = json.loads(export(store.transcript(sid), "json"))  # 4 words, 3 saved: not guessed
    assert [w["probability"] for s in doc["segments"] for w in s["words"]] == [1.0] * 4


def test_unreadable_saved_probabilities_read_as_none(store):
    sid = store.begin_session("s")
    store.save_turn("s", "i1", text="Odd row")
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE turns SET probabilities = 'not json'")
    db.close()
    assert store.turns(sid)[0].probabilities == ()


def test_translations_are_saved_searched_and_exported_as_second_lines(store):
    sid = store.begin_session("s", language="fr")
    store.save_turn("s", "i1", text="Bonjour à tous.", start=0.0, end=1.5, completed=True)
    store.save_turn("s", "i1", translation="Hello everyone.")
    store.save_turn("s", "i2", text="Merci.", start=5.0, end=5.6, completed=True)
    assert [r.id for r in store.search("everyone")] == [sid]
    transcript = store.transcript(sid)
    assert [s.translation for s in transcript.segments] == ["Hello everyone.", None]
    srt = export(transcript, "srt")
    assert "Bonjour à tous.\nHello everyone.\n" in srt and "Merci.\n" in srt
    vtt = export(transcript, "vtt")
    assert "Bonjour à tous.\nHello everyone.\n" in vtt
    txt = export(transcript, "txt")
    assert txt == "Bonjour à tous.\nHello everyone.\n\nMerci.\n"
    doc = json.loads(export(transcript, "json"))
    assert doc["segments"][0]["translation"] == "Hello everyone."
    assert "translation" not in doc["segments"][1] and doc["translation"] == "Hello everyone."
    assert from_json(export(transcript, "json")) == transcript
    assert "*Hello everyone.*" in export(transcript, "md")


def test_a_long_translated_turn_shares_its_translation_over_its_cues(store):
    sid = store.begin_session("s")
    original = "Première phrase assez longue. Deuxième phrase ici."
    english = "First rather long sentence. Second sentence here."
    store.save_turn("s", "i1", text=original, start=0.0, end=6.0, translation=english)
    segments = store.transcript(sid).segments
    assert len(segments) == 2
    assert " ".join(s.translation or "" for s in segments) == english
    assert all(s.translation for s in segments)


def test_sessions_without_translations_export_exactly_as_before(store):
    sid = store.begin_session("s")
    store.save_turn("s", "i1", text="One.", start=0.0, end=1.0)
    store.save_turn("s", "i2", text="two", start=1.1, end=1.5)
    segments = store.transcript(sid).segments
    assert [s.text for s in segments] == ["One.", "two"]
    assert "translation" not in export(store.transcript(sid), "json")

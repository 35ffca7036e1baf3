"""Recovery keeps what later columns hold: speakers, translations, probabilities, corrections."""

from __future__ import annotations

import sqlite3

from desktop_rt.history.recover import recover_history
from desktop_rt.history.store import TranscriptStore
from tests.history.test_store_corrections import SPEAKERS_SCHEMA


def test_a_copy_with_every_column_is_recovered_whole_and_twice_adds_nothing(tmp_path):
    source = tmp_path / "old.sqlite3"
    with TranscriptStore(source) as store:
        store.begin_session("s", started_at="2026-03-02T10:00:00")
        store.save_turn(
            "s", "a", text="Bonjour", start=0.0, end=1.0, completed=True, speaker="You",
            translation="Hello", probabilities=[0.4],
        )  # fmt: skip
        store.save_turn("s", "b", text="Au revoir", start=2.0, end=3.0, completed=True)
        store.correct_turn(store.turn_id("s", "b"), "Au revoir, tous")
        expected = [
            (t.item_id, t.text, t.original_text, t.speaker, t.translation, t.probabilities)
            for t in store.turns(store.sessions()[0].id)
        ]
    into_path = tmp_path / "new.sqlite3"
    with TranscriptStore(into_path) as into:
        for _ in range(2):
            recover_history(source, into)
        [session] = into.sessions()
        got = [
            (t.item_id, t.text, t.original_text, t.speaker, t.translation, t.probabilities)
            for t in into.turns(session.id)
        ]
    assert got == expected


def test_a_copy_of_the_previous_schema_is_recovered_without_the_new_columns(tmp_path):
    source = tmp_path / "old.sqlite3"
    with sqlite3.connect(source) as db:
        db.executescript(SPEAKERS_SCHEMA)
    db.close()
    with TranscriptStore(tmp_path / "new.sqlite3") as into:
        got = recover_history(source, into)
        [turn] = into.turns(into.sessions()[0].id)
    assert got.turns == 1 and turn.text == "Written before corrections."
    assert (turn.original_text, turn.translation, turn.probabilities) == (None, "", ())

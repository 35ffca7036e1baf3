"""A live turn's correction goes through the writer thread, after the turn's own writes."""

from __future__ import annotations

from desktop_rt.history.store import TranscriptStore
from desktop_rt.history.writer import StoreWriter


def test_a_correction_queued_behind_the_turn_applies_and_a_bad_one_blocks_nothing(tmp_path):
    path = tmp_path / "history.sqlite3"
    writer = StoreWriter(path)
    try:
        writer.begin_session("s")
        writer.save_turn("s", "i1", text="Hello wold.", completed=True)
        writer.correct_turn("s", "i1", "Hello world.")
        writer.correct_turn("s", "missing", "Never saved.")  # logged and dropped
        writer.correct_turn("s", "i1", "   ")  # refused: the correction stays
        writer.save_turn("s", "i2", text="Next turn.", completed=True)
        assert writer.flush()
        assert writer.pending_failed == 0
    finally:
        writer.close()
    with TranscriptStore(path) as store:
        turns = store.turns(store.sessions()[0].id)
    assert [(t.text, t.original_text) for t in turns] == [
        ("Hello world.", "Hello wold."),
        ("Next turn.", None),
    ]

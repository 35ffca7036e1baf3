"""Word probabilities from the deltas' logprobs reach the captions and the history (real SQLite)."""

from __future__ import annotations

from desktop_rt.engine.protocol.events import (
    InputAudioBufferCommitted,
    LogProb,
    TranscriptionCompleted,
    TranscriptionDelta,
)
from desktop_rt.engine.protocol.translation import TranslationDelta, TranslationTentative
from desktop_rt.history.store import TranscriptStore
from desktop_rt.history.writer import StoreWriter
from desktop_rt.live.transcript_recorder import TranscriptRecorder


def probs(*pairs: tuple[str, float]) -> tuple[LogProb, ...]:
    return tuple(LogProb.of(token, p) for token, p in pairs)


def test_each_caption_word_carries_its_probability_and_the_row_saves_them(tmp_path):
    writer = StoreWriter(tmp_path / "h.sqlite3")
    try:
        rec = TranscriptRecorder("rec_1", writer)
        (turn,) = rec.handle(TranscriptionDelta("a", "Hello", probs(("Hello", 0.9))))
        assert turn.session_uid == "rec_1"
        (turn,) = rec.handle(
            TranscriptionDelta("a", " [MUSIC] wold", probs((" [MUSIC]", 0.1), (" wold", 0.2)))
        )
        assert turn.committed == "Hello wold" and turn.probabilities == (0.9, 0.2)
        rec.handle(InputAudioBufferCommitted("a", None))
        whole = probs(("Hello", 0.9), (" [MUSIC]", 0.1), (" wold", 0.25))
        (turn,) = rec.handle(TranscriptionCompleted("a", "Hello [MUSIC] wold", 1.0, logprobs=whole))
        assert turn.final and turn.probabilities == (0.9, 0.25)
        (turn,) = rec.handle(TranscriptionDelta("b", "No logprobs"))  # e.g. echo de-duplicated
        assert turn.probabilities == (None, None)
        assert writer.flush()
        with TranscriptStore(writer.path) as store:
            turns = store.turns(store.sessions()[0].id)
        assert [(t.text, t.probabilities) for t in turns] == [
            ("Hello wold", (0.9, 0.25)),
            ("No logprobs", (None, None)),
        ]
    finally:
        writer.close()


def test_a_translation_before_the_first_words_is_saved_with_them_and_tentative_never(tmp_path):
    writer = StoreWriter(tmp_path / "h.sqlite3")
    try:
        rec = TranscriptRecorder("rec_1", writer)
        rec.handle(TranslationDelta("a", "Good"))
        rec.handle(TranscriptionDelta("a", "Guten"))
        rec.handle(TranslationTentative("a", " morning"))
        assert writer.flush()
        with TranscriptStore(writer.path) as store:
            [turn] = store.turns(store.sessions()[0].id)
        assert (turn.text, turn.translation) == ("Guten", "Good")
    finally:
        writer.close()


def test_a_turn_decoded_whole_replaces_its_streamed_words_on_screen_and_in_the_history(tmp_path):
    """The completed transcript of a turn heard whole (docs/design/streaming.md) differs from
    the deltas: the caption and the saved row take its text and its words' probabilities."""
    writer = StoreWriter(tmp_path / "h.sqlite3")
    try:
        rec = TranscriptRecorder("rec_1", writer)
        streamed = probs(("He", 0.9), (" was", 0.8), (" not", 0.7), (" an", 0.4), (" ill", 0.3))
        rec.handle(TranscriptionDelta("a", "He was not an ill", streamed))
        rec.handle(InputAudioBufferCommitted("a", None))
        whole = probs(
            ("He", 0.95), (" was", 0.9), (" not", 0.9), (" an", 0.8), (" ill-disposed.", 0.6)
        )
        (turn,) = rec.handle(
            TranscriptionCompleted("a", "He was not an ill-disposed.", 3.0, logprobs=whole)
        )
        assert turn.final and turn.committed == "He was not an ill-disposed."
        assert turn.probabilities == (0.95, 0.9, 0.9, 0.8, 0.6)
        assert rec.committed_text == "He was not an ill-disposed."
        assert writer.flush()
        with TranscriptStore(writer.path) as store:
            (row,) = store.turns(store.sessions()[0].id)
        assert (row.text, row.completed) == ("He was not an ill-disposed.", True)
        assert row.probabilities == (0.95, 0.9, 0.9, 0.8, 0.6)
    finally:
        writer.close()

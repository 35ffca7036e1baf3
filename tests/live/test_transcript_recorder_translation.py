"""The recorder's English line (live translation): shown with its turn and saved with it."""

from __future__ import annotations

from desktop_rt.config import Settings, TranscriptionSettings
from desktop_rt.engine.protocol.events import InputAudioBufferCommitted, TranscriptionCompleted
from desktop_rt.engine.protocol.events import TranscriptionDelta as Delta
from desktop_rt.engine.protocol.translation import (
    TranslationCompleted,
    TranslationDelta,
    TranslationTentative,
)
from desktop_rt.history.store import TranscriptStore
from desktop_rt.history.writer import StoreWriter
from desktop_rt.live.session import LiveSettings
from desktop_rt.live.transcript_recorder import TranscriptRecorder


def test_translation_events_fill_the_turns_english_line_and_its_final_words_are_saved(tmp_path):
    writer = StoreWriter(tmp_path / "h.sqlite3")
    try:
        recorder = TranscriptRecorder("rec_1", writer, model="whisper-base")
        recorder.handle(Delta("item_1", "Bonjour"))
        (turn,) = recorder.handle(TranslationTentative("item_1", "Hello every"))
        assert (turn.committed, turn.translation, turn.translation_tentative) == (
            "Bonjour", "", "Hello every",
        )  # fmt: skip
        (turn,) = recorder.handle(TranslationDelta("item_1", "Hello"))
        assert (turn.translation, turn.translation_tentative) == ("Hello", "")
        recorder.handle(InputAudioBufferCommitted("item_1", None))
        recorder.handle(TranscriptionCompleted("item_1", "Bonjour à tous.", 2.0))
        (turn,) = recorder.handle(TranslationCompleted("item_1", "Hello everyone."))
        assert turn.final and turn.translation == "Hello everyone."
        assert recorder.captions()[0].translation == "Hello everyone."
        assert writer.flush()
        with TranscriptStore(writer.path) as store:
            (session,) = store.sessions()
            assert [(t.text, t.translation) for t in store.turns(session.id)] == [
                ("Bonjour à tous.", "Hello everyone.")
            ]
    finally:
        writer.close()


def test_live_settings_carry_translate_as_its_own_update():
    settings = Settings().with_group(transcription=TranscriptionSettings(translate=True))
    live = LiveSettings.from_settings(settings)
    assert live.translate
    assert live.translation_update().patch.translate is True
    assert live.session_update().patch.translate is not True  # the rest never fails with it
    assert LiveSettings().translation_update().patch.translate is False

"""Live translation's option and events, without I/O (engine/protocol/translation.py and the
``translate`` field of session_config.py)."""

from __future__ import annotations

import pytest

from desktop_rt.engine.protocol.events import Clear, Flush, to_wire
from desktop_rt.engine.protocol.session_config import (
    ProtocolError,
    SessionPatch,
    parse_session_patch,
)
from desktop_rt.engine.protocol.translation import TranslationLedger
from tests.support.session_support import make, only_error, types, update, words

PREFIX = "conversation.item.input_audio_transcription.translation"


def wire(events) -> list[dict]:
    return [to_wire(e) for e in events]


# ---- the option ---------------------------------------------------------------------------


def test_translate_is_read_in_both_shapes_and_null_turns_it_off():
    ga = parse_session_patch({"audio": {"input": {"transcription": {"translate": True}}}})
    beta = parse_session_patch({"input_audio_transcription": {"translate": True}})
    assert ga.translate is True and beta.translate is True
    assert beta.translate_param == "session.input_audio_transcription.translate"
    off = parse_session_patch({"audio": {"input": {"transcription": {"translate": None}}}})
    assert off.translate is False
    reset = parse_session_patch({"audio": {"input": {"transcription": None}}})
    assert reset.translate is False


@pytest.mark.parametrize("value", ["yes", 1, [], {"language": "en"}])
def test_translate_must_be_a_boolean(value):
    session = make(translates=True)
    error = only_error(update(session, transcription={"translate": value}))
    assert error["code"] == "invalid_type"
    assert error["param"] == "session.audio.input.transcription.translate"
    assert session.config.translate is False


def test_a_model_that_cannot_translate_refuses_it_and_nothing_changes():
    session = make()  # translates=False: the model cannot
    error = only_error(update(session, transcription={"language": "de", "translate": True}))
    assert error["code"] == "invalid_value" and "cannot translate" in error["message"]
    assert session.config.language is None and not session.config.translate
    assert types(update(session, transcription={"translate": False})) == ["session.updated"]


def test_a_model_that_translates_takes_it_and_shows_it():
    session = make(translates=True)
    (updated,) = update(session, transcription={"translate": True})
    assert updated["session"]["audio"]["input"]["transcription"]["translate"] is True
    assert session.config.translate
    (updated,) = update(session, transcription={"translate": False})
    assert "translate" not in updated["session"]["audio"]["input"]["transcription"]


def test_a_built_patch_is_checked_too():
    with pytest.raises(ProtocolError, match="cannot translate"):
        SessionPatch(translate=True).resolved({"en"}, translates=False)
    assert SessionPatch(translate=True).resolved({"en"}, translates=True).translate


# ---- the ledger ---------------------------------------------------------------------------


def test_deltas_join_to_the_completed_translation():
    ledger = TranslationLedger()
    ledger.sent([Flush("item_1", final=True)])
    assert ledger.awaiting_flush
    first = wire(ledger.words("item_1", words(" Hello", " there"), words(" my")))
    last = wire(ledger.flushed("item_1", words(" my", " friend")))
    assert types(first) == [f"{PREFIX}.delta"]  # no tentative unless asked for
    assert types(last) == [f"{PREFIX}.delta", f"{PREFIX}.completed"]
    assert first[0]["delta"] == "Hello there"  # a transcript does not start with a space
    done = last[-1]
    assert done["transcript"] == first[0]["delta"] + last[0]["delta"] == "Hello there my friend"
    assert done["language"] == "en" and done["item_id"] == "item_1"
    assert not ledger.awaiting_flush


def test_tentative_words_only_when_the_session_shows_them():
    ledger = TranslationLedger(emit_tentative=True)
    events = wire(ledger.words("item_1", [], words(" Good", " morning")))
    assert events == [{**events[0], "type": f"{PREFIX}.tentative", "text": "Good morning"}]
    assert ledger.words("item_1", [], words(" Good", " morning")) == []  # unchanged: nothing


def test_an_item_with_no_english_words_still_completes_empty():
    ledger = TranslationLedger()
    ledger.sent([Flush("item_2", final=False)])
    (done,) = wire(ledger.flushed("item_2", []))
    assert done["type"] == f"{PREFIX}.completed" and done["transcript"] == ""


def test_nothing_is_sent_for_a_cleared_item():
    ledger = TranslationLedger(emit_tentative=True)
    ledger.words("item_3", words(" Gone"), [])
    ledger.sent([Clear("item_3")])
    assert ledger.words("item_3", words(" late"), words(" words")) == []
    assert ledger.flushed("item_3", words(" late")) == []
    assert wire(ledger.words("item_4", words(" Next"), []))[0]["delta"] == "Next"

"""Language tags: BCP-47 tags map onto the model's languages; unknown ones are refused."""

from __future__ import annotations

import pytest
from faster_whisper.tokenizer import _LANGUAGE_CODES

from desktop_rt.engine.protocol.events import Configure, SessionUpdate
from desktop_rt.engine.protocol.fields import MAX_PROMPT_BYTES
from desktop_rt.engine.protocol.languages import WHISPER_LANGUAGES, resolve_language
from desktop_rt.engine.protocol.session_config import SessionPatch
from tests.support.session_support import drain, make, only_error, send, update

GA_LANGUAGE = "session.audio.input.transcription.language"
BETA_LANGUAGE = "session.input_audio_transcription.language"


def test_the_whisper_set_is_faster_whispers():
    assert frozenset(_LANGUAGE_CODES) == WHISPER_LANGUAGES


@pytest.mark.parametrize(
    "tag, code",
    [
        ("en", "en"),
        ("en-US", "en"),
        ("EN-us", "en"),
        ("zh-Hant-TW", "zh"),
        ("zh-CN", "zh"),
        ("pt_BR", "pt"),
        ("yue-HK", "yue"),
        ("haw", "haw"),
        ("nb-NO", "no"),
        ("iw", "he"),
        ("jv", "jw"),
        ("fil-PH", "tl"),
        ("xx", None),
        ("xx-US", None),
        ("en-", "en"),
    ],
)
def test_tags_resolve_onto_whisper_languages(tag, code):
    assert resolve_language(tag, WHISPER_LANGUAGES) == code


def test_a_full_tag_in_the_set_wins_and_aliases_go_both_ways():
    assert resolve_language("zh-TW", {"zh", "zh-tw"}) == "zh-tw"
    assert resolve_language("jw", {"jv"}) == "jv"
    assert resolve_language("de", {"en"}) is None


@pytest.mark.parametrize(
    "tag, code", [("en-US", "en"), ("zh-Hant-TW", "zh"), ("PT_br", "pt"), ("de-CH", "de")]
)
def test_session_update_maps_a_browser_tag_to_the_models_code(tag, code):
    session = make()
    (updated,) = update(session, transcription={"language": tag})
    assert updated["type"] == "session.updated"
    assert updated["session"]["audio"]["input"]["transcription"]["language"] == code
    assert session.config.language == code
    assert session.commands() == [Configure(code, None)]


@pytest.mark.parametrize("tag", ["xx", "xx-US", "qaa", "tlh-Latn"])
def test_an_unknown_language_is_refused_and_changes_nothing(tag):
    session = make()
    update(session, transcription={"language": "de", "prompt": "Namen"})
    session.commands()
    before = session.config
    error = only_error(
        send(
            session,
            type="session.update",
            event_id="u1",
            session={"audio": {"input": {"transcription": {"language": tag, "prompt": "neu"}}}},
        )
    )
    assert (error["type"], error["code"], error["param"]) == (
        "invalid_request_error",
        "invalid_value",
        GA_LANGUAGE,
    )
    assert error["event_id"] == "u1" and GA_LANGUAGE in error["message"]
    assert session.config == before and session.commands() == []


def test_the_beta_shape_names_its_own_field():
    session = make()
    events = send(
        session,
        type="transcription_session.update",
        session={"input_audio_transcription": {"language": "xx"}},
    )
    assert only_error(events)["param"] == BETA_LANGUAGE
    (updated,) = send(
        session,
        type="transcription_session.update",
        session={"input_audio_transcription": {"language": "fr-CA"}},
    )
    assert updated["session"]["audio"]["input"]["transcription"]["language"] == "fr"


def test_a_session_accepts_the_languages_it_is_given():
    session = make(languages=frozenset({"en", "zh"}))
    assert update(session, transcription={"language": "zh-Hant-TW"})[0]["type"] == (
        "session.updated"
    )
    error = only_error(update(session, transcription={"language": "de"}))
    assert (error["code"], error["param"]) == ("invalid_value", GA_LANGUAGE)
    assert session.config.language == "zh"
    assert make().languages == WHISPER_LANGUAGES  # the default: Whisper's


def test_a_null_or_empty_language_still_means_detect():
    session = make()
    update(session, transcription={"language": "en-GB"})
    assert update(session, transcription={"language": None})[0]["type"] == "session.updated"
    assert session.config.language is None
    update(session, transcription={"language": "en"})
    update(session, transcription={"language": ""})
    assert session.config.language is None


def test_a_patch_built_in_code_is_mapped_and_bounded_too():
    session = make()
    session.receive_event(SessionUpdate(SessionPatch(language="en-GB")))
    assert drain(session)[0]["type"] == "session.updated"
    assert session.config.language == "en" and session.commands() == [Configure("en", None)]
    huge = SessionPatch(prompt="p" * (MAX_PROMPT_BYTES + 1))
    session.receive_event(SessionUpdate(huge, event_id="app"))
    error = only_error(drain(session))
    assert (error["code"], error["event_id"]) == ("invalid_value", "app")
    assert session.config.prompt is None and session.commands() == []

"""Per-session text fields are bounded and valid Unicode; a refused update changes nothing."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from desktop_rt.engine.protocol.events import Configure
from desktop_rt.engine.protocol.fields import (
    MAX_INCLUDE_ITEMS,
    MAX_LANGUAGE_BYTES,
    MAX_NAME_BYTES,
    MAX_PROMPT_BYTES,
)
from desktop_rt.engine.protocol.languages import WHISPER_LANGUAGES, resolve_language
from tests.support.session_support import EnergyScorer, drain, make, only_error, send

GA = "session.audio.input.transcription"
BETA = "session.input_audio_transcription"


def ga_update(transcription: dict, **session) -> dict:
    return {
        "type": "session.update",
        "event_id": "u1",
        "session": {"audio": {"input": {"transcription": transcription}}, **session},
    }


def configured():
    """A session with settings of its own, its commands drained."""
    session = make()
    session.receive_text(json.dumps(ga_update({"language": "de", "prompt": "Namen"})))
    drain(session)
    session.commands()
    return session


def refused(session, frame: dict | str) -> dict:
    """The one error ``frame`` gets; the settings and the worker are untouched."""
    before = session.config
    session.receive_text(frame if isinstance(frame, str) else json.dumps(frame))
    error = only_error(drain(session))
    assert (error["type"], error["code"]) == ("invalid_request_error", "invalid_value"), error
    assert session.config == before and session.commands() == []
    return error


# ---- the prompt -----------------------------------------------------------------------------


@pytest.mark.parametrize("size", [MAX_PROMPT_BYTES + 1, 10 * 1024 * 1024])
def test_a_prompt_over_the_limit_is_refused_naming_the_field(size):
    session = configured()
    error = refused(session, ga_update({"prompt": "a" * size}))
    assert error["param"] == f"{GA}.prompt" and str(MAX_PROMPT_BYTES) in error["message"]
    assert len(error["message"]) < 500
    beta = {
        "type": "transcription_session.update",
        "session": {"input_audio_transcription": {"prompt": "b" * size}},
    }
    assert refused(session, beta)["param"] == f"{BETA}.prompt"
    assert session.config.prompt == "Namen"


def test_the_prompt_limit_counts_utf8_bytes():
    session = configured()
    at_limit = "ü" * (MAX_PROMPT_BYTES // 2)  # two bytes each
    (updated,) = send(session, **ga_update({"prompt": at_limit}))
    assert updated["type"] == "session.updated"
    assert session.commands() == [Configure("de", at_limit)]
    error = refused(session, ga_update({"prompt": at_limit + "ü"}))
    assert error["param"] == f"{GA}.prompt"


@pytest.mark.parametrize(
    "field, value",
    [
        ("prompt", "Herr M\\u00fcller \\ud800"),
        ("prompt", "\\udc00 trailing"),
        ("language", "en-\\ud83d"),
        ("model", "whisper\\udfff"),
    ],
)
def test_text_that_is_not_valid_unicode_is_refused(field, value):
    session = configured()
    frame = (
        '{"type": "session.update", "event_id": "u1", "session": {"audio": {"input": '
        f'{{"transcription": {{"{field}": "{value}"}}}}}}}}}}'
    )
    error = refused(session, frame)
    assert error["param"] == f"{GA}.{field}"
    assert "Unicode" in error["message"] or field == "language"


def test_a_surrogate_pair_is_valid_text():
    session = configured()
    frame = json.dumps(ga_update({"prompt": "smile \U0001f600"}))  # escaped as \ud83d\ude00
    assert "\\ud83d\\ude00" in frame
    session.receive_text(frame)
    assert drain(session)[0]["type"] == "session.updated"
    assert session.config.prompt == "smile \U0001f600"


# ---- the other fields -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "frame, param",
    [
        (ga_update({"language": "en-" + "-".join(["abcdefgh"] * 8)}), f"{GA}.language"),
        (ga_update({"model": "m" * (MAX_NAME_BYTES + 1)}), f"{GA}.model"),
        (ga_update({}, model="m" * (MAX_NAME_BYTES + 1)), "session.model"),
        (ga_update({}, include=["x"] * (MAX_INCLUDE_ITEMS + 1)), "session.include"),
        (ga_update({}, include=["i" * (MAX_NAME_BYTES + 1)]), "session.include[0]"),
        (
            {
                "type": "transcription_session.update",
                "event_id": "u1",
                "session": {"input_audio_transcription": {"model": "m" * 100_000}},
            },
            f"{BETA}.model",
        ),
    ],
)
def test_every_text_field_is_bounded(frame, param):
    session = configured()
    error = refused(session, frame)
    assert error["param"] == param and error["event_id"] == "u1"
    assert len(error["message"]) < 500


def test_include_must_be_a_list_of_strings():
    session = configured()
    assert only_error(send(session, **ga_update({}, include="logprobs")))["code"] == "invalid_type"
    error = only_error(send(session, **ga_update({}, include=[3])))
    assert (error["code"], error["param"]) == ("invalid_type", "session.include[0]")
    ok = ga_update({}, include=["item.input_audio_transcription.logprobs"])
    assert send(session, **ok)[0]["type"] == "session.updated"


@pytest.mark.parametrize(
    "session_obj, param",
    [
        ({"type": "x" * 100_000}, "session.type"),
        ({"input_audio_format": "y" * 100_000}, "session.input_audio_format"),
        (
            {"audio": {"input": {"format": {"type": "z" * 100_000}}}},
            "session.audio.input.format.type",
        ),
        (
            {"audio": {"input": {"turn_detection": {"type": "w" * 100_000}}}},
            "session.audio.input.turn_detection.type",
        ),
    ],
)
def test_a_refused_value_is_quoted_short(session_obj, param):
    error = only_error(send(make(), type="session.update", session=session_obj))
    assert error["param"] == param and len(error["message"]) < 500


# ---- any update: applied whole, or refused whole --------------------------------------------

_SURROGATE = "\ud800"
_TAG = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*")


@st.composite
def sized_text(draw, limit: int):
    """Text near ``limit`` UTF-8 bytes or short, sometimes with a lone surrogate."""
    unit = draw(st.sampled_from(["a", "ü", "€", "\U0001f600"]))
    width = len(unit.encode())
    count = draw(st.integers(0, 3) | st.integers(limit // width - 2, limit // width + 2))
    text = draw(st.text(max_size=4)) + unit * count
    if draw(st.integers(0, 4)) == 0:
        at = draw(st.integers(0, len(text)))
        text = text[:at] + _SURROGATE + text[at:]
    return text


languages = st.one_of(
    st.none(),
    st.sampled_from(["", "en", "en-US", "zh-Hant-TW", "pt_BR", "EN", "xx", "qaa", "nb-NO"]),
    st.from_regex(r"[a-z]{2,3}(-[A-Za-z0-9]{1,8}){0,2}", fullmatch=True),
    sized_text(MAX_LANGUAGE_BYTES),
)
fields = st.fixed_dictionaries(
    {},
    optional={
        "language": languages,
        "prompt": st.none() | sized_text(MAX_PROMPT_BYTES),
        "model": st.none() | sized_text(MAX_NAME_BYTES),
    },
)
includes = st.lists(
    st.just("item.input_audio_transcription.logprobs"), max_size=MAX_INCLUDE_ITEMS + 2
) | st.lists(sized_text(MAX_NAME_BYTES), max_size=2)


def _text_ok(text: str | None, limit: int) -> bool:
    return text is None or (_SURROGATE not in text and len(text.encode()) <= limit)


def _language_ok(tag: str | None) -> bool:
    if not tag:
        return True
    return (
        _text_ok(tag, MAX_LANGUAGE_BYTES)
        and _TAG.fullmatch(tag) is not None
        and resolve_language(tag, WHISPER_LANGUAGES) is not None
    )


def acceptable(transcription: dict, include: list[str] | None) -> bool:
    """The oracle: every value within its bound, valid Unicode, a known language, and only
    OpenAI's one ``include`` value."""
    return (
        _language_ok(transcription.get("language"))
        and _text_ok(transcription.get("prompt"), MAX_PROMPT_BYTES)
        and _text_ok(transcription.get("model"), MAX_NAME_BYTES)
        and (
            include is None
            or (
                len(include) <= MAX_INCLUDE_ITEMS
                and all(i == "item.input_audio_transcription.logprobs" for i in include)
            )
        )
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fields, st.none() | includes, st.booleans())
def test_any_update_applies_or_gets_one_invalid_value_and_changes_nothing(
    transcription, include, beta
):
    session = make(vad_factory=EnergyScorer)
    session.receive_text(json.dumps(ga_update({"language": "de", "prompt": "Namen"})))
    drain(session)
    session.commands()
    before = session.config
    if beta:
        frame = {
            "type": "transcription_session.update",
            "session": {"input_audio_transcription": transcription},
        }
    else:
        frame = ga_update(transcription)
    if include is not None:
        frame["session"]["include"] = include
    session.receive_text(json.dumps(frame))
    events = drain(session)
    commands = session.commands()
    if acceptable(transcription, include):
        event("applied")
        assert [e["type"] for e in events] == ["session.updated"], events
        config = session.config
        assert config.language is None or config.language in WHISPER_LANGUAGES
        assert config.prompt is None or len(config.prompt.encode()) <= MAX_PROMPT_BYTES
        assert all(isinstance(c, Configure) for c in commands) and len(commands) <= 1
        assert events[0]["session"]["audio"]["input"]["transcription"]["language"] == (
            config.language
        )
    else:
        error = only_error(events)
        event(f"refused: {error['param'].rpartition('.')[2]}")
        assert error["code"] == "invalid_value", error
        assert error["param"].startswith(("session.include", BETA if beta else GA)), error
        assert session.config == before and commands == []

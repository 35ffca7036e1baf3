"""Client frames into client events: what parses, and what each bad frame is told."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_rt.engine.audio.codecs import PCM16, PCMA, PCMU, AudioFormat
from desktop_rt.engine.protocol.events import (
    ErrorEvent,
    InputAudioBufferAppend,
    InputAudioBufferClear,
    InputAudioBufferCommit,
    ProtocolError,
    SessionUpdate,
    to_wire,
)
from desktop_rt.engine.protocol.parsing import parse_client_event
from desktop_rt.engine.protocol.session_config import SessionConfig, describe_format
from tests.support.session_support import parse, parse_error

CLIENT_EVENTS = (
    SessionUpdate,
    InputAudioBufferAppend,
    InputAudioBufferCommit,
    InputAudioBufferClear,
)
CONFIG = SessionConfig(id="sess_1", model="whisper-base")


def test_append_decodes_base64_and_keeps_event_id():
    event = parse(
        {
            "type": "input_audio_buffer.append",
            "audio": base64.b64encode(b"\x01\x02").decode(),
            "event_id": "e1",
        }
    )
    assert event == InputAudioBufferAppend(b"\x01\x02", event_id="e1")


def test_commit_clear_and_final():
    assert parse({"type": "input_audio_buffer.commit"}) == InputAudioBufferCommit(False)
    assert parse({"type": "input_audio_buffer.commit", "final": True}) == InputAudioBufferCommit(
        True
    )
    assert parse({"type": "input_audio_buffer.clear", "event_id": "c"}) == InputAudioBufferClear(
        "c"
    )


@pytest.mark.parametrize(
    "text, code, param",
    [
        ("not json", "invalid_json", None),
        ("", "invalid_json", None),
        ("[1, 2]", "invalid_event", None),
        ('"input_audio_buffer.commit"', "invalid_event", None),
        ("{}", "missing_required_parameter", "type"),
        ('{"type": 5}', "invalid_type", "type"),
        ('{"type": "response.create"}', "unknown_event_type", "type"),
        ('{"type": "input_audio_buffer.append"}', "missing_required_parameter", "audio"),
        ('{"type": "input_audio_buffer.append", "audio": 12}', "invalid_type", "audio"),
        ('{"type": "input_audio_buffer.append", "audio": "not base64!"}', "invalid_audio", "audio"),
        ('{"type": "input_audio_buffer.append", "audio": "AAA"}', "invalid_audio", "audio"),
        ('{"type": "input_audio_buffer.commit", "final": "yes"}', "invalid_type", "final"),
        ('{"type": "input_audio_buffer.clear", "event_id": 3}', "invalid_type", "event_id"),
        ("[" * 100_000, "invalid_json", None),
        (
            '{"type": "input_audio_buffer.commit", "x": ' + "[" * 50_000 + "]" * 50_000 + "}",
            "invalid_json",
            None,
        ),
        (
            '{"type": "session.update", "session": {"audio": {"input": {"turn_detection": {"threshold": NaN}}}}}',
            "invalid_value",
            "session.audio.input.turn_detection.threshold",
        ),
    ],
)
def test_malformed_events_raise_protocol_errors(text, code, param):
    error = parse_error(text)
    assert (error.code, error.param) == (code, param)


def test_binary_frames_and_too_large_audio_are_rejected():
    assert parse_error(b'{"type": "input_audio_buffer.clear"}').code == "invalid_frame"
    big = base64.b64encode(bytes(3000)).decode()
    error = parse_error(
        {"type": "input_audio_buffer.append", "audio": big, "event_id": "a"}, max_append_bytes=1000
    )
    assert (error.code, error.param, error.event_id) == ("audio_too_large", "audio", "a")


def test_audio_errors_say_what_to_send():
    error = parse_error(
        {"type": "input_audio_buffer.append", "audio": "%%%"},
        audio_format=AudioFormat(PCM16, 24000),
    )
    assert (
        "'audio' must be a base64 string of PCM16 little-endian mono at 24000 Hz" in error.message
    )
    error = parse_error(
        {"type": "input_audio_buffer.append", "audio": 1}, audio_format=AudioFormat(PCMU, 8000)
    )
    assert "G.711 mu-law mono at 8000 Hz" in error.message
    assert describe_format(AudioFormat(PCMA, 8000)) == "G.711 A-law mono at 8000 Hz"


def test_unknown_type_error_lists_the_accepted_ones():
    error = parse_error({"type": "conversation.item.create", "event_id": "z"})
    assert error.event_id == "z"
    assert "input_audio_buffer.append" in error.message and "session.update" in error.message


# --- properties ----------------------------------------------------------------------------

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**40), 2**40)
    | st.floats(allow_nan=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)
field_names = st.sampled_from(
    [
        "type",
        "audio",
        "final",
        "event_id",
        "session",
        "format",
        "rate",
        "transcription",
        "turn_detection",
        "threshold",
        "language",
        "prompt",
        "model",
        "input_audio_format",
        "input_audio_transcription",
        "prefix_padding_ms",
        "silence_duration_ms",
        "noise_reduction",
    ]
)
event_types = st.sampled_from(
    [
        "session.update",
        "transcription_session.update",
        "input_audio_buffer.append",
        "input_audio_buffer.commit",
        "input_audio_buffer.clear",
        "response.create",
        "",
    ]
)


def nested_session():
    leaf = json_values | st.sampled_from(
        ["audio/pcm", "audio/pcmu", "pcm16", "server_vad", 24000, 0.5, "en"]
    )
    return st.recursive(
        leaf,
        lambda inner: st.dictionaries(field_names | st.just("input"), inner, max_size=5),
        max_leaves=12,
    )


@st.composite
def event_like(draw):
    obj = draw(st.dictionaries(field_names, json_values, max_size=4))
    obj["type"] = draw(event_types)
    if draw(st.booleans()):
        obj["session"] = draw(nested_session())
    if draw(st.booleans()):
        obj["audio"] = draw(
            st.binary(max_size=40).map(lambda b: base64.b64encode(b).decode())
            | st.text(max_size=10)
        )
    return obj


def check_parse_outcome(text):
    try:
        event = parse_client_event(text)
    except ProtocolError as exc:
        assert isinstance(exc.code, str) and exc.message
        assert exc.param is None or isinstance(exc.param, str)
        assert exc.event_id is None or isinstance(exc.event_id, str)
        json.dumps(to_wire(ErrorEvent.from_error(exc)))
        return None
    assert isinstance(event, CLIENT_EVENTS)
    return event


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200) | st.binary(max_size=50))
def test_arbitrary_text_parses_or_raises_protocol_error(text):
    check_parse_outcome(text)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_arbitrary_json_parses_or_raises_protocol_error(value):
    check_parse_outcome(json.dumps(value))


@settings(max_examples=400, deadline=None)
@given(event_like())
def test_event_shaped_objects_parse_or_raise_protocol_error(obj):
    event = check_parse_outcome(json.dumps(obj))
    if isinstance(event, SessionUpdate):
        applied = CONFIG.apply(event.patch)
        assert applied.model == CONFIG.model
        json.dumps(applied.to_wire())

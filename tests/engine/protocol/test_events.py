"""Client event parsing, server event wire shapes, and the session object."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_rt.engine.audio.codecs import PCM16, PCMA, PCMU, AudioFormat
from desktop_rt.engine.audio.vad import TurnDetectorSettings
from desktop_rt.engine.protocol.events import (
    AudioChunk,
    ErrorEvent,
    InputAudioBufferAppend,
    InputAudioBufferClear,
    InputAudioBufferCleared,
    InputAudioBufferCommit,
    InputAudioBufferCommitted,
    InputAudioBufferSpeechStarted,
    InputAudioBufferSpeechStopped,
    ProtocolError,
    SessionCreated,
    SessionUpdate,
    SessionUpdated,
    TranscriptionCompleted,
    TranscriptionDelta,
    TranscriptionTentative,
    parse_client_event,
    to_json,
    to_wire,
)
from desktop_rt.engine.protocol.session_config import (
    UNSET,
    SessionConfig,
    SessionPatch,
    describe_format,
)

CLIENT_EVENTS = (
    SessionUpdate,
    InputAudioBufferAppend,
    InputAudioBufferCommit,
    InputAudioBufferClear,
)


def parse(obj, **kwargs):
    return parse_client_event(json.dumps(obj), **kwargs)


def parse_error(obj_or_text, **kwargs) -> ProtocolError:
    text = obj_or_text if isinstance(obj_or_text, (str, bytes)) else json.dumps(obj_or_text)
    with pytest.raises(ProtocolError) as info:
        parse_client_event(text, **kwargs)
    error = info.value
    assert isinstance(error.code, str) and error.code
    assert isinstance(error.message, str) and error.message
    assert error.type == "invalid_request_error"
    return error


# --- client events -------------------------------------------------------------------------


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


def test_ga_session_update_reads_audio_input():
    event = parse(
        {
            "type": "session.update",
            "session": {
                "type": "transcription",
                "audio": {
                    "input": {
                        "format": {"type": "audio/pcm", "rate": 24000},
                        "transcription": {
                            "model": "gpt-4o-transcribe",
                            "language": "de",
                            "prompt": "Namen",
                        },
                        "turn_detection": {
                            "type": "server_vad",
                            "threshold": 0.6,
                            "silence_duration_ms": 200,
                        },
                        "noise_reduction": {"type": "near_field"},
                    }
                },
                "include": ["item.input_audio_transcription.logprobs"],
            },
        }
    )
    assert event == SessionUpdate(
        SessionPatch(
            format=AudioFormat(PCM16, 24000),
            language="de",
            prompt="Namen",
            turn_detection=TurnDetectorSettings(
                threshold=0.6, prefix_padding_ms=300, silence_duration_ms=200
            ),
            model="gpt-4o-transcribe",
        )
    )


def test_beta_transcription_session_update_maps_formats():
    event = parse(
        {
            "type": "transcription_session.update",
            "session": {
                "input_audio_format": "g711_alaw",
                "input_audio_transcription": {"model": "whisper-1", "language": "fr"},
                "turn_detection": None,
                "input_audio_noise_reduction": None,
            },
        }
    )
    assert event.beta
    assert event.patch == SessionPatch(
        format=AudioFormat(PCMA, 8000), language="fr", turn_detection=None, model="whisper-1"
    )
    pcm16 = parse(
        {"type": "transcription_session.update", "session": {"input_audio_format": "pcm16"}}
    )
    assert pcm16.patch.format == AudioFormat(PCM16, 24000)  # beta pcm16 is 24 kHz
    ulaw = parse(
        {"type": "transcription_session.update", "session": {"input_audio_format": "g711_ulaw"}}
    )
    assert ulaw.patch.format == AudioFormat(PCMU, 8000)


def test_update_defaults_and_partial_fields():
    assert parse({"type": "session.update"}).patch == SessionPatch()
    patch = parse(
        {
            "type": "session.update",
            "session": {"audio": {"input": {"format": {"type": "audio/pcm"}}}},
        }
    ).patch
    assert patch.format == AudioFormat(PCM16, 24000)  # OpenAI's rate when none is named
    assert patch.language is UNSET and patch.turn_detection is UNSET
    patch = parse(
        {
            "type": "session.update",
            "session": {"audio": {"input": {"format": {"type": "audio/pcmu"}}}},
        }
    ).patch
    assert patch.format == AudioFormat(PCMU, 8000)
    patch = parse(
        {"type": "session.update", "session": {"audio": {"input": {"transcription": None}}}}
    ).patch
    assert (patch.language, patch.prompt) == (None, None)
    patch = parse(
        {
            "type": "session.update",
            "session": {"model": "other", "audio": {"input": {"transcription": {"language": ""}}}},
        }
    ).patch
    assert patch.model == "other" and patch.language is None and patch.prompt is UNSET


def ga(input_obj: dict) -> dict:
    return {"type": "session.update", "event_id": "u1", "session": {"audio": {"input": input_obj}}}


@pytest.mark.parametrize(
    "obj, code, param",
    [
        (
            ga({"format": {"type": "audio/pcm", "rate": -16000}}),
            "invalid_value",
            "session.audio.input.format.rate",
        ),
        (
            ga({"format": {"type": "audio/pcm", "rate": 96000}}),
            "invalid_value",
            "session.audio.input.format.rate",
        ),
        (
            ga({"format": {"type": "audio/pcm", "rate": 24000.0}}),
            "invalid_type",
            "session.audio.input.format.rate",
        ),
        (
            ga({"format": {"type": "audio/pcm", "rate": "24000"}}),
            "invalid_type",
            "session.audio.input.format.rate",
        ),
        (
            ga({"format": {"type": "audio/opus"}}),
            "invalid_value",
            "session.audio.input.format.type",
        ),
        (
            ga({"format": {"type": "audio/pcmu", "rate": 16000}}),
            "invalid_value",
            "session.audio.input.format.rate",
        ),
        (ga({"format": "audio/pcm"}), "invalid_type", "session.audio.input.format"),
        (
            ga({"turn_detection": {"type": "server_vad", "threshold": 1.5}}),
            "invalid_value",
            "session.audio.input.turn_detection.threshold",
        ),
        (
            ga({"turn_detection": {"type": "server_vad", "threshold": -0.1}}),
            "invalid_value",
            "session.audio.input.turn_detection.threshold",
        ),
        (
            ga({"turn_detection": {"type": "server_vad", "threshold": True}}),
            "invalid_type",
            "session.audio.input.turn_detection.threshold",
        ),
        (
            ga({"turn_detection": {"type": "semantic_vad"}}),
            "invalid_value",
            "session.audio.input.turn_detection.type",
        ),
        (
            ga({"turn_detection": {"type": "server_vad", "silence_duration_ms": -1}}),
            "invalid_value",
            "session.audio.input.turn_detection.silence_duration_ms",
        ),
        (
            ga({"turn_detection": {"type": "server_vad", "prefix_padding_ms": 1.5}}),
            "invalid_type",
            "session.audio.input.turn_detection.prefix_padding_ms",
        ),
        (
            ga({"turn_detection": "server_vad"}),
            "invalid_type",
            "session.audio.input.turn_detection",
        ),
        (
            ga({"transcription": {"language": 7}}),
            "invalid_type",
            "session.audio.input.transcription.language",
        ),
        (
            ga({"transcription": {"language": "english please"}}),
            "invalid_value",
            "session.audio.input.transcription.language",
        ),
        (
            ga({"transcription": {"prompt": ["a"]}}),
            "invalid_type",
            "session.audio.input.transcription.prompt",
        ),
        (ga({"transcription": "whisper"}), "invalid_type", "session.audio.input.transcription"),
        (
            ga({"noise_reduction": {"type": "loud"}}),
            "invalid_value",
            "session.audio.input.noise_reduction.type",
        ),
        (ga([]), "invalid_type", "session.audio.input"),
        (
            {"type": "session.update", "event_id": "u1", "session": {"type": "realtime"}},
            "invalid_value",
            "session.type",
        ),
        ({"type": "session.update", "event_id": "u1", "session": "x"}, "invalid_type", "session"),
        (
            {
                "type": "transcription_session.update",
                "event_id": "u1",
                "session": {"input_audio_format": "mp3"},
            },
            "invalid_value",
            "session.input_audio_format",
        ),
        (
            {
                "type": "transcription_session.update",
                "event_id": "u1",
                "session": {"input_audio_format": 16},
            },
            "invalid_type",
            "session.input_audio_format",
        ),
    ],
)
def test_invalid_session_updates_name_the_field(obj, code, param):
    error = parse_error(obj)
    assert (error.code, error.param, error.event_id) == (code, param, "u1")
    assert param in error.message


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


# --- server events -------------------------------------------------------------------------

CONFIG = SessionConfig(id="sess_1", model="whisper-base")


def test_session_object_shape():
    assert CONFIG.to_wire() == {
        "id": "sess_1",
        "object": "realtime.transcription_session",
        "type": "transcription",
        "audio": {
            "input": {
                "format": {"type": "audio/pcm", "rate": 16000},
                "transcription": {"model": "whisper-base", "language": None, "prompt": None},
                "turn_detection": None,
                "noise_reduction": None,
            }
        },
    }
    vad = SessionConfig(
        "s", "m", AudioFormat(PCMU, 8000), "en", "hi", TurnDetectorSettings(0.4, 200, 700)
    )
    audio_in = vad.to_wire()["audio"]["input"]
    assert audio_in["format"] == {"type": "audio/pcmu"}
    assert audio_in["turn_detection"] == {
        "type": "server_vad",
        "threshold": 0.4,
        "prefix_padding_ms": 200,
        "silence_duration_ms": 700,
    }
    assert audio_in["transcription"] == {"model": "m", "language": "en", "prompt": "hi"}


def test_config_apply_keeps_model_and_unset_fields():
    updated = CONFIG.apply(SessionPatch(language="en", model="someone-else"))
    assert (
        updated.model == "whisper-base"
        and updated.language == "en"
        and updated.format == CONFIG.format
    )
    assert updated.apply(SessionPatch(language=None)).language is None


def test_server_event_wire_shapes():
    cases = [
        (SessionCreated(CONFIG), {"type": "session.created", "session": CONFIG.to_wire()}),
        (SessionUpdated(CONFIG), {"type": "session.updated", "session": CONFIG.to_wire()}),
        (
            InputAudioBufferCommitted("item_2", "item_1"),
            {
                "type": "input_audio_buffer.committed",
                "item_id": "item_2",
                "previous_item_id": "item_1",
            },
        ),
        (
            InputAudioBufferCommitted("item_1", None),
            {"type": "input_audio_buffer.committed", "item_id": "item_1", "previous_item_id": None},
        ),
        (InputAudioBufferCleared(), {"type": "input_audio_buffer.cleared"}),
        (
            InputAudioBufferSpeechStarted("item_1", 700),
            {
                "type": "input_audio_buffer.speech_started",
                "item_id": "item_1",
                "audio_start_ms": 700,
            },
        ),
        (
            InputAudioBufferSpeechStopped("item_1", 2000),
            {
                "type": "input_audio_buffer.speech_stopped",
                "item_id": "item_1",
                "audio_end_ms": 2000,
            },
        ),
        (
            TranscriptionDelta("item_1", " world"),
            {
                "type": "conversation.item.input_audio_transcription.delta",
                "item_id": "item_1",
                "content_index": 0,
                "delta": " world",
            },
        ),
        (
            TranscriptionTentative("item_1", "maybe"),
            {
                "type": "conversation.item.input_audio_transcription.tentative",
                "item_id": "item_1",
                "content_index": 0,
                "text": "maybe",
            },
        ),
        (
            TranscriptionCompleted("item_1", "Hello world", 1.23456),
            {
                "type": "conversation.item.input_audio_transcription.completed",
                "item_id": "item_1",
                "content_index": 0,
                "transcript": "Hello world",
                "usage": {"type": "duration", "seconds": 1.235},
            },
        ),
        (
            ErrorEvent("bad", "invalid_value", "session.type", client_event_id="c1"),
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "code": "invalid_value",
                    "message": "bad",
                    "param": "session.type",
                    "event_id": "c1",
                },
            },
        ),
    ]
    for event, expected in cases:
        wire = to_wire(event)
        assert wire.pop("event_id") == event.event_id
        assert wire == expected
        assert json.loads(to_json(event)) == to_wire(event)


def test_event_ids_are_unique_and_prefixed():
    ids = {InputAudioBufferCleared().event_id for _ in range(1000)}
    assert len(ids) == 1000
    assert all(i.startswith("event_") and len(i) > 12 for i in ids)


def test_error_event_from_protocol_error():
    exc = ProtocolError("no", code="x", param="p", type="server_error", event_id="e")
    assert to_wire(ErrorEvent.from_error(exc))["error"] == {
        "type": "server_error",
        "code": "x",
        "message": "no",
        "param": "p",
        "event_id": "e",
    }


def test_to_json_is_ascii_even_for_lone_surrogates():
    text = to_json(TranscriptionDelta("item_1", "caf\u00e9 \ud800"))
    text.encode("ascii")
    assert json.loads(text)["delta"] == "caf\u00e9 \ud800"


def test_audio_chunk_holds_float32_samples():
    chunk = AudioChunk("item_1", np.zeros(4, dtype=np.float32))
    assert chunk.samples.dtype == np.float32 and chunk.item_id == "item_1"


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

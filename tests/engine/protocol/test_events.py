"""Server events on the wire: shapes, ids, errors, JSON encoding; worker commands."""

from __future__ import annotations

import json

import numpy as np

from desktop_rt.engine.protocol.events import (
    AudioChunk,
    ErrorEvent,
    InputAudioBufferCleared,
    InputAudioBufferCommitted,
    InputAudioBufferSpeechStarted,
    InputAudioBufferSpeechStopped,
    ProtocolError,
    SessionCreated,
    SessionUpdated,
    TranscriptionCompleted,
    TranscriptionDelta,
    TranscriptionTentative,
    to_json,
    to_wire,
)
from desktop_rt.engine.protocol.session_config import SessionConfig

CONFIG = SessionConfig(id="sess_1", model="whisper-base")


WIRE_CASES = [
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


def test_server_event_wire_shapes():
    for event, expected in WIRE_CASES:
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

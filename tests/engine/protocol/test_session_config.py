"""Session settings: both update shapes read into patches, invalid fields named, the wire object."""

from __future__ import annotations

import pytest

from desktop_rt.engine.audio.codecs import PCM16, PCMA, PCMU, AudioFormat
from desktop_rt.engine.audio.vad import TurnDetectorSettings
from desktop_rt.engine.protocol.events import SessionUpdate
from desktop_rt.engine.protocol.session_config import UNSET, SessionConfig, SessionPatch
from tests.support.session_support import parse, parse_error

CONFIG = SessionConfig(id="sess_1", model="whisper-base")


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
                        "noise_reduction": None,
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
            include=("item.input_audio_transcription.logprobs",),
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
            ga({"turn_detection": {"type": "model_vad"}}),
            "invalid_value",
            "session.audio.input.turn_detection.type",
        ),
        (
            ga({"turn_detection": {"type": "semantic_vad", "eagerness": "eager"}}),
            "invalid_value",
            "session.audio.input.turn_detection.eagerness",
        ),
        (
            ga({"turn_detection": {"type": "semantic_vad", "silence_duration_ms": 300}}),
            "invalid_value",
            "session.audio.input.turn_detection.silence_duration_ms",
        ),
        (
            ga({"turn_detection": {"type": "server_vad", "idle_timeout_ms": 0}}),
            "invalid_value",
            "session.audio.input.turn_detection.idle_timeout_ms",
        ),
        (
            ga({"turn_detection": {"type": "server_vad", "create_response": "yes"}}),
            "invalid_type",
            "session.audio.input.turn_detection.create_response",
        ),
        (
            ga({"noise_reduction": {"type": "near_field"}}),
            "invalid_value",
            "session.audio.input.noise_reduction",
        ),
        (
            ga({"transcription": {"delay": "low"}}),
            "invalid_value",
            "session.audio.input.transcription.delay",
        ),
        (
            ga({"transcription": {"languages": ["en", "de"]}}),
            "invalid_value",
            "session.audio.input.transcription.languages",
        ),
        (
            {"type": "session.update", "event_id": "u1", "session": {"include": ["x.logprobs"]}},
            "invalid_value",
            "session.include[0]",
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


def test_session_object_shape():
    assert CONFIG.to_wire() == {
        "id": "sess_1",
        "object": "realtime.transcription_session",
        "type": "transcription",
        "audio": {
            "input": {
                "format": {"type": "audio/pcm", "rate": 24000},  # OpenAI's default rate
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

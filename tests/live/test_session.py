"""The live session's typed API: what the window's settings send to the server session."""

from __future__ import annotations

from dataclasses import replace

import pytest

from desktop_rt.config import HANDS_FREE, PUSH_TO_TALK, AudioSettings, Settings
from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.codecs import PCM16, AudioFormat
from desktop_rt.engine.audio.vad import TurnDetectorSettings
from desktop_rt.engine.protocol.events import SessionUpdate, SessionUpdated
from desktop_rt.live.session import LiveSettings
from tests.support.session_support import EnergyScorer, make, parse

VAD = TurnDetectorSettings(threshold=0.6, prefix_padding_ms=250, silence_duration_ms=700)


def app_settings(mode: str, language: str | None = "de") -> Settings:
    s = Settings().with_group(audio=AudioSettings(mode=mode), vad=VAD)
    return s.with_group(transcription=replace(s.transcription, language=language))


def test_push_to_talk_sends_no_turn_detection_and_the_feed_rate():
    live = LiveSettings.from_settings(app_settings(PUSH_TO_TALK))
    assert not live.hands_free and live.mode == PUSH_TO_TALK
    patch = live.session_update().patch
    assert patch.format == AudioFormat(PCM16, SAMPLE_RATE)
    assert patch.language == "de" and patch.turn_detection is None


def test_hands_free_sends_the_one_vad_settings_type():
    live = LiveSettings.from_settings(app_settings(HANDS_FREE, language=None))
    assert live.hands_free and live.mode == HANDS_FREE
    patch = live.session_update().patch
    assert patch.turn_detection is VAD and patch.language is None


@pytest.mark.parametrize("mode", [PUSH_TO_TALK, HANDS_FREE])
def test_the_typed_update_matches_the_wire_update_the_app_sent_before(mode):
    settings = app_settings(mode)
    turn = None
    if mode == HANDS_FREE:
        turn = {
            "type": "server_vad",
            "threshold": VAD.threshold,
            "prefix_padding_ms": VAD.prefix_padding_ms,
            "silence_duration_ms": VAD.silence_duration_ms,
        }
    wire = {
        "type": "session.update",
        "session": {
            "type": "transcription",
            "audio": {
                "input": {
                    "format": {"type": "audio/pcm", "rate": SAMPLE_RATE},
                    "transcription": {"language": "de"},
                    "turn_detection": turn,
                }
            },
            "include": ["item.input_audio_transcription.logprobs"],  # word probabilities
        },
    }
    assert LiveSettings.from_settings(settings).session_update() == parse(wire)


def test_a_session_applies_the_update():
    session = make(vad_factory=EnergyScorer)
    update = LiveSettings("en", VAD).session_update()
    assert isinstance(update, SessionUpdate)
    session.receive_event(update)
    [updated] = session.events_to_send()
    assert isinstance(updated, SessionUpdated)
    config = updated.session
    assert config.format == AudioFormat(PCM16, SAMPLE_RATE)
    assert (config.language, config.turn_detection) == ("en", VAD)


def test_settings_that_do_not_change_the_session_compare_equal():
    ptt = app_settings(PUSH_TO_TALK)
    other_vad = ptt.with_group(vad=replace(VAD, threshold=0.9))
    # Push-to-talk ignores the VAD settings, so changing them sends no update.
    assert LiveSettings.from_settings(ptt) == LiveSettings.from_settings(other_vad)
    hands_free = app_settings(HANDS_FREE)
    assert LiveSettings.from_settings(hands_free) != LiveSettings.from_settings(
        hands_free.with_group(vad=replace(VAD, threshold=0.9))
    )

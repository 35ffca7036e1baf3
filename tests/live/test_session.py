"""The live session's typed API: what the window's settings send to the server session."""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace

import numpy as np
import pytest

from desktop_rt.config import HANDS_FREE, PUSH_TO_TALK, AudioSettings, Settings
from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.codecs import PCM16, AudioFormat
from desktop_rt.engine.audio.sources import FileAudioSource
from desktop_rt.engine.audio.vad import TurnDetectorSettings
from desktop_rt.engine.protocol.events import SessionUpdate, SessionUpdated
from desktop_rt.engine.server.server import RealtimeServer, ServerConfig
from desktop_rt.live.session import LiveSession, LiveSettings
from desktop_rt.live.transcript_recorder import CaptionTurn
from tests.support.clips import read_clip
from tests.support.held_backend import until
from tests.support.learning_backend import LearningBackend
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


# ---- corrections teach the session (issue 18 item 5) ----------------------------------------

GAP = 2.0  # seconds of silence between the two turns' clips


@dataclass
class Taught:
    first: CaptionTurn
    second: CaptionTurn
    learnt: tuple[str, ...]
    prompts_after: list[str | None]  # what the backend was prompted with after the correction


def correct_between_turns(backend: LearningBackend, clip: np.ndarray, correct) -> Taught:
    """Push-to-talk over ``clip``; the source pauses in the silence after it; the user's
    correction ``correct(first turn)`` is learnt; then push-to-talk over ``clip`` again."""
    seconds = len(clip) / SAMPLE_RATE
    audio = np.concatenate([clip, np.zeros(int(GAP * SAMPLE_RATE), np.float32), clip])
    source = FileAudioSource(audio, autoplay=False)
    turns: dict[str, CaptionTurn] = {}
    closed = threading.Event()

    def publish(value: object) -> None:
        if isinstance(value, CaptionTurn):
            turns[value.item_id] = value

    def finals() -> list[CaptionTurn]:
        return sorted((t for t in dict(turns).values() if t.final), key=lambda t: t.index)

    with RealtimeServer(ServerConfig(port=0), backend) as server:
        live = LiveSession(
            server,
            source,
            LiveSettings("en"),
            writer=None,
            model=server.config.model_id,
            publish=publish,
            on_closed=lambda _uid: closed.set(),
        )
        live.start()
        live.talk_down()
        source.play()
        assert until(lambda: source.position > seconds + 0.2)  # in the silence
        live.talk_up()
        source.simulate_loss()  # the clip waits here (talk is up: no turn to end)
        assert source.position < seconds + GAP, "the pause was missed"
        assert until(lambda: len(finals()) == 1, timeout=120), turns
        [first] = finals()
        before = len(backend.prompts_seen())
        learnt = live.learn(first.committed, correct(first))
        source.simulate_return()
        live.talk_down()
        assert until(source.finished.is_set)
        live.talk_up()
        live.stop()
        assert closed.wait(120), "the session did not close"
    later = backend.prompts_seen()[before:]
    [_, second] = finals()
    return Taught(first, second, learnt, later)


def test_a_corrected_word_prompts_the_model_for_the_rest_of_the_session():
    """The first turn is written "Dashwud"; the user corrects it to "Dashwood"; from then on
    every pass is prompted with it, and the second turn is written that way."""
    backend = LearningBackend("and mister John Dashwood had", {"Dashwood": "Dashwud"})
    clip = read_clip("ss-0870")[: int(3.5 * SAMPLE_RATE)]  # the backend's five words fit
    taught = correct_between_turns(
        backend, clip, lambda first: first.committed.replace("Dashwud", "Dashwood")
    )
    assert "Dashwud" in taught.first.committed, taught.first
    assert taught.learnt == ("Dashwood",)
    later = taught.prompts_after
    assert later and all("Dashwood" in (p or "") for p in later), later
    assert "Dashwood" in taught.second.committed and "Dashwud" not in taught.second.committed


def test_a_correction_respells_the_context_that_prompts_the_rest_of_the_session():
    """As Whisper, the backend copies the spelling nearest its prompt's end: the keyword alone
    loses to the first turn's committed text ("... John Dashwud had"), which the correction
    respells in every later prompt; the captions already sent keep what was heard."""
    backend = LearningBackend("and mister John Dashwood had", {"Dashwood": "Dashwud"}, True)
    clip = read_clip("ss-0870")[: int(3.5 * SAMPLE_RATE)]
    taught = correct_between_turns(
        backend, clip, lambda first: first.committed.replace("Dashwud", "Dashwood")
    )
    assert "Dashwud" in taught.first.committed, taught.first
    later = taught.prompts_after
    assert later and all("Dashwood" in (p or "") for p in later), later
    assert not any("Dashwud" in (p or "") for p in later), later
    assert any("John Dashwood had" in (p or "") for p in later), later  # the context, respelled
    assert "Dashwood" in taught.second.committed and "Dashwud" not in taught.second.committed

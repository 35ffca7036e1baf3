"""The rest of OpenAI's transcription session (issue 16, item 2), honoured or refused by name.

``include`` logprobs, ``semantic_vad`` and its eagerness, ``idle_timeout_ms``, noise reduction,
keywords, usage and languages on ``completed``, and ``failed`` when the recognizer fails.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from desktop_rt.core_types import Word
from desktop_rt.engine.audio.codecs import float_to_pcm16
from desktop_rt.engine.protocol.events import Configure, TranscriptionCompleted
from desktop_rt.engine.protocol.session import RealtimeSession
from desktop_rt.engine.protocol.turn_detection import EAGERNESS_SILENCE_MS
from tests.support.session_support import (
    COMPLETED,
    DELTA,
    PCM_100MS,
    EnergyScorer,
    append,
    drain,
    make,
    only_error,
    send,
    silence,
    tone,
    types,
    update,
)

LOGPROBS = "item.input_audio_transcription.logprobs"
FAILED = "conversation.item.input_audio_transcription.failed"
TIMEOUT = "input_audio_buffer.timeout_triggered"


def stream(session: RealtimeSession, audio: np.ndarray, chunk: int = 1600) -> list[dict]:
    raw = float_to_pcm16(audio)
    events = []
    for i in range(0, len(raw), 2 * chunk):
        events += append(session, raw[i : i + 2 * chunk])
    return events


def committed_item(session: RealtimeSession) -> str:
    append(session, PCM_100MS)
    (committed,) = send(session, type="input_audio_buffer.commit")
    session.commands()
    return committed["item_id"]


# --- include: logprobs ---------------------------------------------------------------------


def test_include_logprobs_puts_one_entry_per_word_on_deltas_and_completed():
    session = make()
    (updated,) = send(session, type="session.update", session={"include": [LOGPROBS]})
    assert updated["session"]["include"] == [LOGPROBS]
    item = committed_item(session)
    session.recognizer_words(item, [Word(" Grüß", 0, 1, 0.5), Word(" Gott", 1, 2, 1.0)], [])
    session.recognizer_flushed(item, [Word(".", 2, 2.1, 0.0)])
    first, last, done = drain(session)
    assert first["delta"] == "Grüß Gott"
    assert [lp["token"] for lp in first["logprobs"]] == ["Grüß", " Gott"]  # join to the delta
    assert first["logprobs"][0]["logprob"] == pytest.approx(math.log(0.5))
    assert first["logprobs"][0]["bytes"] == list("Grüß".encode())
    assert first["logprobs"][1]["logprob"] == 0.0
    assert last["logprobs"][0]["token"] == "." and math.isfinite(last["logprobs"][0]["logprob"])
    assert [lp["token"] for lp in done["logprobs"]] == ["Grüß", " Gott", "."]


def test_without_include_there_are_no_logprobs():
    session = make()
    item = committed_item(session)
    session.recognizer_flushed(item, [Word(" Hi", 0, 1, 0.9)])
    delta, done = drain(session)
    assert "logprobs" not in delta and "logprobs" not in done
    assert "include" not in session.config.to_wire()


# --- semantic_vad ----------------------------------------------------------------------------


@pytest.mark.parametrize("eagerness, silence_ms", [*EAGERNESS_SILENCE_MS.items(), (None, 1000)])
def test_semantic_vad_maps_eagerness_to_the_silence_that_ends_a_turn(eagerness, silence_ms):
    session = make(vad_factory=EnergyScorer)
    turn = (
        {"type": "semantic_vad"}
        if eagerness is None
        else {"type": "semantic_vad", "eagerness": eagerness}
    )
    (updated,) = update(session, turn_detection=turn)
    wire = updated["session"]["audio"]["input"]["turn_detection"]
    assert wire["type"] == "semantic_vad" and wire["eagerness"] == (eagerness or "auto")
    assert wire["silence_duration_ms"] == silence_ms
    assert session.config.turn_detection.silence_duration_ms == silence_ms


def test_high_eagerness_ends_a_turn_where_low_eagerness_waits():
    audio = np.concatenate([tone(0.5, 16000), silence(1.2, 16000)])
    stopped = {}
    for eagerness in ("high", "low"):
        session = make(vad_factory=EnergyScorer)
        update(session, turn_detection={"type": "semantic_vad", "eagerness": eagerness})
        stopped[eagerness] = "input_audio_buffer.speech_stopped" in types(stream(session, audio))
    assert stopped == {"high": True, "low": False}


# --- idle_timeout_ms -----------------------------------------------------------------------


def test_idle_timeout_commits_the_silent_item_once_per_silence():
    session = make(vad_factory=EnergyScorer)
    (updated,) = update(session, turn_detection={"type": "server_vad", "idle_timeout_ms": 1000})
    assert updated["session"]["audio"]["input"]["turn_detection"]["idle_timeout_ms"] == 1000
    events = stream(session, silence(1.5, 16000))
    assert types(events) == [TIMEOUT, "input_audio_buffer.committed"]
    timeout, committed = events
    assert (timeout["audio_start_ms"], timeout["audio_end_ms"]) == (0, 1000)
    assert timeout["item_id"] == committed["item_id"]
    assert stream(session, silence(2.0, 16000)) == []  # once, until someone speaks
    session.recognizer_flushed(committed["item_id"], [])
    assert drain(session)[0]["transcript"] == ""
    events = stream(session, np.concatenate([tone(0.5, 16000), silence(1.8, 16000)]))
    assert types(events)[:3] == [
        "input_audio_buffer.speech_started",
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.committed",
    ]
    assert types(events)[3:] == [TIMEOUT, "input_audio_buffer.committed"]


def test_without_idle_timeout_silence_sends_nothing():
    session = make(vad_factory=EnergyScorer)
    update(session, turn_detection={"type": "server_vad"})
    assert stream(session, silence(5.0, 16000)) == []


# --- noise reduction, transcription fields, conversation events ---------------------------


@pytest.mark.parametrize("kind", ["near_field", "far_field"])
def test_noise_reduction_is_refused_by_name_and_changes_nothing(kind):
    session = make()
    before = session.config
    error = only_error(
        update(session, noise_reduction={"type": kind}, transcription={"language": "de"})
    )
    assert (error["code"], error["param"]) == (
        "invalid_value",
        "session.audio.input.noise_reduction",
    )
    assert kind in error["message"] and "denoiser" in error["message"]
    assert session.config == before
    (updated,) = update(session, noise_reduction=None)
    assert updated["session"]["audio"]["input"]["noise_reduction"] is None


def test_keywords_join_the_prompt_and_one_language_of_languages_is_the_language():
    session = make()
    (updated,) = update(
        session,
        transcription={
            "prompt": "Ein Gespräch.",
            "keywords": ["Müller", "Kubernetes"],
            "languages": ["de"],
        },
    )
    transcription = updated["session"]["audio"]["input"]["transcription"]
    assert (
        transcription["keywords"] == ["Müller", "Kubernetes"] and transcription["language"] == "de"
    )
    assert session.commands() == [Configure("de", "Ein Gespräch. Müller, Kubernetes")]


def test_conversation_events_are_refused_as_not_transcription():
    session = make()
    error = only_error(send(session, type="response.create", event_id="r1"))
    assert (error["code"], error["event_id"]) == ("unknown_event_type", "r1")
    assert "only transcribes" in error["message"]


# --- completed: usage and language; failed -------------------------------------------------


def test_completed_carries_duration_usage_and_the_language_when_known():
    session = make()
    item = committed_item(session)
    session.recognizer_flushed(item, [Word(" Hallo", 0, 1)], language="de")
    done = drain(session)[-1]
    assert done["usage"] == {"type": "duration", "seconds": 0.1}
    assert done["languages"] == [{"code": "de"}]
    update(session, transcription={"language": "fr"})
    item = committed_item(session)
    session.recognizer_flushed(item, [])
    assert drain(session)[-1]["languages"] == [{"code": "fr"}]  # the language it was told


def test_completed_without_a_known_language_names_none():
    session = make()
    item = committed_item(session)
    session.recognizer_flushed(item, [])
    assert "languages" not in drain(session)[-1]


def test_a_recognizer_failure_ends_the_item_it_hit_as_failed():
    session = make()
    first = committed_item(session)
    append(session, PCM_100MS)
    session.commands()
    session.recognizer_words(first, [Word(" Half", 0, 1)], [])
    session.recognizer_failed("model crashed")
    error = drain(session)[-1]
    assert (error["type"], error["error"]["code"]) == ("error", "recognizer_failed")
    session.recognizer_flushed(first, [])
    (failed,) = drain(session)
    assert failed["type"] == FAILED and failed["item_id"] == first
    assert failed["error"]["code"] == "recognizer_failed"
    assert (
        "model crashed" in failed["error"]["message"] and failed["error"]["type"] == "server_error"
    )
    (committed,) = send(session, type="input_audio_buffer.commit")  # the next item is not hit
    session.recognizer_flushed(committed["item_id"], [Word(" Fine", 0, 1)])
    assert types(drain(session)) == [DELTA, COMPLETED]


def test_a_failure_hits_the_open_item_when_nothing_awaits_its_flush():
    session = make()
    append(session, PCM_100MS)
    session.commands()
    session.recognizer_failed("out of memory")
    drain(session)
    (committed,) = send(session, type="input_audio_buffer.commit")
    session.recognizer_flushed(committed["item_id"], [])
    events = session.events_to_send()
    assert [e.type for e in events] == [FAILED]
    assert isinstance(events[0], TranscriptionCompleted)  # in-process consumers end the item too

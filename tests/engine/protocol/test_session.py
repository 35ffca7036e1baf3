"""RealtimeSession driven like the server and worker drive it; assertions on what comes out."""

from __future__ import annotations

import json

import numpy as np
import pytest

from desktop_rt.engine.audio.codecs import float_to_pcm16
from desktop_rt.engine.protocol.events import (
    AudioChunk,
    Clear,
    Configure,
    ErrorEvent,
    Flush,
    to_json,
)
from desktop_rt.engine.protocol.session import RealtimeSession, SessionStateError
from tests.support.session_support import (
    COMPLETED,
    DELTA,
    PCM_100MS,
    TENTATIVE,
    append,
    chunk_samples,
    drain,
    flushes,
    make,
    only_error,
    send,
    tone,
    types,
    update,
    words,
)

# --- lifecycle -----------------------------------------------------------------------------


def test_session_created_comes_first_with_the_session_object():
    session = RealtimeSession(model="whisper-base", session_id="sess_abc")
    session.start()
    (created,) = drain(session)
    assert created["type"] == "session.created" and created["event_id"].startswith("event_")
    assert created["session"]["id"] == "sess_abc" == session.session_id
    # OpenAI's default: a client that names no format sends PCM16 at 24 kHz (issue 16, bug 4).
    assert created["session"]["audio"]["input"]["format"] == {"type": "audio/pcm", "rate": 24000}
    assert created["session"]["audio"]["input"]["transcription"]["model"] == "whisper-base"
    assert session.commands() == [] and not session.wants_close


def test_calls_in_the_wrong_state_raise():
    session = RealtimeSession(model="m")
    assert session.session_id.startswith("sess_")
    with pytest.raises(SessionStateError):
        session.receive_text("{}")
    session.start()
    with pytest.raises(SessionStateError):
        session.start()


def test_append_commit_and_flush_complete_an_item():
    session = make()
    assert append(session, PCM_100MS) == []
    assert append(session, PCM_100MS) == []
    events = send(session, type="input_audio_buffer.commit")
    assert types(events) == ["input_audio_buffer.committed"]
    item = events[0]["item_id"]
    assert events[0]["previous_item_id"] is None
    commands = session.commands()
    assert all(c.item_id == item for c in commands)
    assert chunk_samples(commands) == 3200
    assert all(c.samples.dtype == np.float32 for c in commands if isinstance(c, AudioChunk))
    assert flushes(commands) == [Flush(item, final=False)]

    session.recognizer_words(item, words(" Hello", " there"), words(" wor"))
    session.recognizer_flushed(item, words(" world."))
    events = drain(session)
    assert types(events) == [DELTA, DELTA, COMPLETED]
    assert [e["delta"] for e in events[:2]] == ["Hello there", " world."]
    assert events[2]["transcript"] == "Hello there world."
    assert events[2]["usage"] == {"type": "duration", "seconds": 0.2}
    assert events[2]["content_index"] == 0 and events[2]["item_id"] == item


def test_items_chain_and_deltas_can_arrive_before_the_commit():
    session = make()
    append(session, PCM_100MS)
    (first,) = {c.item_id for c in session.commands()}
    session.recognizer_words(first, words(" One"), [])
    assert [e["delta"] for e in drain(session)] == ["One"]
    (committed,) = send(session, type="input_audio_buffer.commit")
    assert committed["item_id"] == first
    append(session, PCM_100MS)
    (second,) = {c.item_id for c in session.commands() if isinstance(c, AudioChunk)}
    assert second != first
    (committed,) = send(session, type="input_audio_buffer.commit")
    assert committed == {**committed, "item_id": second, "previous_item_id": first}
    session.recognizer_flushed(first, [])
    session.recognizer_flushed(second, words("  Two"))
    events = drain(session)
    assert [(e["type"], e["item_id"]) for e in events] == [
        (COMPLETED, first),
        (DELTA, second),
        (COMPLETED, second),
    ]
    assert events[0]["transcript"] == "One" and events[2]["transcript"] == "Two"


def test_each_items_first_delta_loses_its_leading_whitespace():
    session = make()
    append(session, PCM_100MS)
    (item,) = {c.item_id for c in session.commands()}
    session.recognizer_words(item, words(" "), [])
    session.recognizer_words(item, [], [])
    assert drain(session) == []
    session.recognizer_words(item, words(" \tA", " b"), [])
    session.recognizer_words(item, words(" c"), [])
    assert [e["delta"] for e in drain(session)] == ["A b", " c"]


def test_commit_without_audio_is_an_error_and_the_session_goes_on():
    session = make()
    error = only_error(send(session, type="input_audio_buffer.commit", event_id="evt_9"))
    assert error["code"] == "input_audio_buffer_commit_empty" and error["event_id"] == "evt_9"
    append(session, PCM_100MS)
    send(session, type="input_audio_buffer.commit")
    assert (
        only_error(send(session, type="input_audio_buffer.commit"))["code"]
        == "input_audio_buffer_commit_empty"
    )
    assert types(append(session, PCM_100MS)) == []


def test_final_commit_completes_the_last_item_then_wants_close():
    session = make()
    append(session, PCM_100MS)
    (committed,) = send(session, type="input_audio_buffer.commit", final=True)
    assert committed["type"] == "input_audio_buffer.committed"
    assert flushes(session.commands()) == [Flush(committed["item_id"], final=True)]
    assert not session.wants_close
    assert only_error(append(session, PCM_100MS))["code"] == "input_ended"
    assert only_error(send(session, type="input_audio_buffer.commit"))["code"] == "input_ended"
    assert session.commands() == []
    session.recognizer_flushed(committed["item_id"], words(" Bye"))
    assert types(drain(session)) == [DELTA, COMPLETED]
    assert session.wants_close


def test_final_without_audio_waits_for_items_in_flight():
    session = make()
    append(session, PCM_100MS)
    (committed,) = send(session, type="input_audio_buffer.commit")
    assert send(session, type="input_audio_buffer.commit", final=True) == []
    assert flushes(session.commands()) == [Flush(committed["item_id"], final=False)]
    assert not session.wants_close
    session.recognizer_flushed(committed["item_id"], [])
    assert types(drain(session)) == [COMPLETED] and session.wants_close


def test_final_on_a_fresh_session_closes_at_once():
    session = make()
    assert send(session, type="input_audio_buffer.commit", final=True) == []
    assert session.wants_close and session.commands() == []


def test_end_input_commits_the_open_item_as_final_once():
    session = make()
    append(session, PCM_100MS)
    session.end_input()
    (committed,) = drain(session)
    assert flushes(session.commands()) == [Flush(committed["item_id"], final=True)]
    session.end_input()
    assert drain(session) == [] and session.commands() == []
    session.recognizer_flushed(committed["item_id"], words(" kept"))
    assert drain(session)[-1]["transcript"] == "kept"
    assert session.wants_close


def test_clear_drops_the_open_item_and_ignores_its_stale_results():
    session = make()
    append(session, PCM_100MS)
    (old,) = {c.item_id for c in session.commands()}
    session.recognizer_words(old, words(" said"), [])
    assert types(drain(session)) == [DELTA]  # stays sent: a cleared item never completes
    assert types(send(session, type="input_audio_buffer.clear")) == ["input_audio_buffer.cleared"]
    assert session.commands() == [Clear(old)]
    session.recognizer_words(old, words(" late"), words(" later"))
    session.recognizer_flushed(old, words(" never"))
    assert drain(session) == []
    assert (
        only_error(send(session, type="input_audio_buffer.commit"))["code"]
        == "input_audio_buffer_commit_empty"
    )
    append(session, PCM_100MS)
    (new,) = {c.item_id for c in session.commands()}
    assert new != old
    (committed,) = send(session, type="input_audio_buffer.commit")
    assert committed["item_id"] == new and committed["previous_item_id"] is None


def test_clear_of_an_empty_buffer_sends_no_command():
    session = make()
    assert types(send(session, type="input_audio_buffer.clear")) == ["input_audio_buffer.cleared"]
    assert session.commands() == []


def test_tentative_words_only_when_asked_for():
    plain = make()
    append(plain, PCM_100MS)
    (item,) = {c.item_id for c in plain.commands()}
    plain.recognizer_words(item, [], words(" maybe"))
    assert drain(plain) == []

    session = make(emit_tentative=True)
    append(session, PCM_100MS)
    (item,) = {c.item_id for c in session.commands()}
    session.recognizer_words(item, [], words(" maybe", " so"))
    session.recognizer_words(item, [], words(" maybe", " so"))
    session.recognizer_words(item, words(" Maybe"), words(" so"))
    events = drain(session)
    assert [(e["type"], e.get("text", e.get("delta"))) for e in events] == [
        (TENTATIVE, "maybe so"),
        (DELTA, "Maybe"),
        (TENTATIVE, " so"),
    ]
    assert events[0]["item_id"] == item


def test_results_for_unknown_items_are_ignored():
    session = make()
    session.recognizer_words("item_nope", words(" x"), words(" y"))
    session.recognizer_flushed("item_nope", words(" x"))
    append(session, PCM_100MS)
    (committed,) = send(session, type="input_audio_buffer.commit")
    session.recognizer_flushed(committed["item_id"], [])
    session.recognizer_flushed(committed["item_id"], words(" again"))
    session.recognizer_words(committed["item_id"], words(" again"), [])
    assert types(drain(session)) == [COMPLETED]


def test_recognizer_failure_is_a_server_error_and_the_session_goes_on():
    session = make()
    session.recognizer_failed("model crashed")
    error = only_error(drain(session))
    assert error["type"] == "server_error" and "model crashed" in error["message"]
    assert append(session, PCM_100MS) == []


# --- formats and updates -------------------------------------------------------------------


@pytest.mark.parametrize(
    "fmt, rate, width",
    [
        ({"type": "audio/pcm", "rate": 24000}, 24000, 2),
        ({"type": "audio/pcm", "rate": 48000}, 48000, 2),
        ({"type": "audio/pcm", "rate": 44100}, 44100, 2),
        ({"type": "audio/pcm", "rate": 8000}, 8000, 2),
        ({"type": "audio/pcmu"}, 8000, 1),
        ({"type": "audio/pcma"}, 8000, 1),
    ],
)
def test_input_is_resampled_to_16_khz(fmt, rate, width):
    session = make()
    (updated,) = update(session, format=fmt)
    assert updated["type"] == "session.updated"
    assert updated["session"]["audio"]["input"]["format"]["type"] == fmt["type"]
    rng = np.random.default_rng(rate)
    total = 0
    for _ in range(20):
        n = int(rng.integers(1, 2000))
        total += n
        assert append(session, rng.integers(0, 256, n * width, dtype=np.uint8).tobytes()) == []
    (committed,) = send(session, type="input_audio_buffer.commit")
    commands = session.commands()
    expected = total * 16000 / rate
    assert abs(chunk_samples(commands) - expected) <= 1
    session.recognizer_flushed(committed["item_id"], [])
    assert drain(session)[0]["usage"]["seconds"] == pytest.approx(total / rate, abs=1e-3)


def test_pcm16_odd_byte_count_is_an_error():
    session = make()
    error = only_error(append(session, b"\x00\x01\x02", event_id="odd"))
    assert (error["code"], error["param"], error["event_id"]) == ("invalid_audio", "audio", "odd")
    assert "PCM16 little-endian mono at 16000 Hz" in error["message"]
    assert session.commands() == []
    update(session, format={"type": "audio/pcmu"})
    assert append(session, b"\x00\x01\x02") == []  # one byte per sample


def test_beta_update_is_answered_with_the_ga_session():
    session = make()
    (updated,) = send(
        session,
        type="transcription_session.update",
        session={
            "input_audio_format": "pcm16",
            "input_audio_transcription": {"model": "gpt-4o-transcribe", "language": "en"},
        },
    )
    assert updated["type"] == "session.updated"
    audio_in = updated["session"]["audio"]["input"]
    assert audio_in["format"] == {"type": "audio/pcm", "rate": 24000}
    assert audio_in["transcription"] == {"model": "whisper-base", "language": "en", "prompt": None}
    assert session.model == "whisper-base" == session.config.model
    assert session.commands() == [Configure("en", None)]


def test_language_and_prompt_reach_the_worker_once():
    session = make()
    update(session, transcription={"language": "de", "prompt": "Herr Müller"})
    assert session.commands() == [Configure("de", "Herr Müller")]
    update(session, transcription={"language": "de"})
    assert session.commands() == []
    (updated,) = update(session, transcription=None)
    assert updated["session"]["audio"]["input"]["transcription"]["prompt"] is None
    assert session.commands() == [Configure(None, None)]


@pytest.mark.parametrize(
    "audio_input",
    [
        {"format": {"type": "audio/pcm", "rate": -24000}},
        {"format": {"type": "audio/flac"}},
        {
            "format": {"type": "audio/pcm", "rate": 24000},
            "turn_detection": {"type": "server_vad", "threshold": 2},
        },
        {"format": {"type": "audio/pcm", "rate": 24000}, "transcription": {"language": 1}},
    ],
)
def test_invalid_update_leaves_the_session_unchanged(audio_input):
    session = make()
    before = session.config
    error = only_error(
        send(
            session, type="session.update", event_id="u", session={"audio": {"input": audio_input}}
        )
    )
    assert error["event_id"] == "u" and error["param"].startswith("session.audio.input")
    assert session.config == before and session.commands() == []
    append(session, PCM_100MS)
    assert chunk_samples(session.commands()) == 1600  # still 16 kHz


def test_format_change_flushes_the_old_resampler_into_the_open_item():
    session = make()
    update(session, format={"type": "audio/pcm", "rate": 24000})
    append(session, float_to_pcm16(tone(0.1, 24000)))
    update(session, format={"type": "audio/pcmu"})
    append(session, bytes(800))
    send(session, type="input_audio_buffer.commit")
    assert abs(chunk_samples(session.commands()) - 3200) <= 1


def test_update_naming_another_model_keeps_the_model():
    session = make()
    (updated,) = send(session, type="session.update", session={"model": "gpt-4o-transcribe"})
    assert updated["type"] == "session.updated"
    assert updated["session"]["audio"]["input"]["transcription"]["model"] == "whisper-base"


# --- errors never end the session ----------------------------------------------------------


@pytest.mark.parametrize(
    "message, code",
    [
        ("{", "invalid_json"),
        ("[]", "invalid_event"),
        ('{"type": "response.create", "event_id": "r"}', "unknown_event_type"),
        ('{"audio": "AAAA"}', "missing_required_parameter"),
        ('{"type": "input_audio_buffer.append", "audio": "@@@@"}', "invalid_audio"),
        ('{"type": "input_audio_buffer.append", "audio": null}', "missing_required_parameter"),
        (b"\x00\x01binary", "invalid_frame"),
    ],
)
def test_bad_messages_give_one_well_formed_error(message, code):
    session = make()
    session.receive_text(message)
    (event,) = session.events_to_send()
    assert isinstance(event, ErrorEvent)
    wire = json.loads(to_json(event))
    assert wire["type"] == "error" and wire["event_id"].startswith("event_")
    assert wire["error"]["type"] == "invalid_request_error" and wire["error"]["code"] == code
    assert wire["error"]["message"]
    assert append(session, PCM_100MS) == [] and len(session.commands()) == 1

"""RealtimeSession with server_vad: turns found in the audio, committed automatically."""

from __future__ import annotations

import numpy as np
import pytest

from desktop_rt.engine.audio.codecs import float_to_pcm16
from desktop_rt.engine.audio.file_decode import load_audio_file
from desktop_rt.engine.protocol.events import (
    Clear,
    Flush,
)
from desktop_rt.engine.protocol.session import RealtimeSession
from tests.support.clips import DATA
from tests.support.session_support import (
    COMPLETED,
    EnergyScorer,
    append,
    chunk_samples,
    drain,
    flushes,
    make,
    only_error,
    send,
    silence,
    tone,
    types,
    update,
    words,
)

# --- server VAD ----------------------------------------------------------------------------


def stream(
    session: RealtimeSession, audio: np.ndarray, rate: int, chunk_seconds: float = 0.1
) -> list[dict]:
    raw = float_to_pcm16(audio)
    step = round(chunk_seconds * rate) * 2
    events = []
    for i in range(0, len(raw), step):
        events += append(session, raw[i : i + step])
    return events


def test_server_vad_marks_turns_and_commits_them():
    session = make(vad_factory=EnergyScorer)
    (updated,) = update(
        session,
        format={"type": "audio/pcm", "rate": 24000},
        turn_detection={
            "type": "server_vad",
            "threshold": 0.5,
            "prefix_padding_ms": 300,
            "silence_duration_ms": 500,
        },
    )
    assert updated["session"]["audio"]["input"]["turn_detection"]["type"] == "server_vad"
    rate = 24000
    audio = np.concatenate(
        [silence(1, rate), tone(1, rate), silence(1.5, rate), tone(0.5, rate), silence(1, rate)]
    )
    events = stream(session, audio, rate)
    assert types(events) == [
        "input_audio_buffer.speech_started",
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.committed",
        "input_audio_buffer.speech_started",
        "input_audio_buffer.speech_stopped",
        "input_audio_buffer.committed",
    ]
    first, second = events[0]["item_id"], events[3]["item_id"]
    assert events[1]["item_id"] == events[2]["item_id"] == first != second
    assert events[2]["previous_item_id"] is None and events[5]["previous_item_id"] == first
    assert events[0]["audio_start_ms"] == pytest.approx(700, abs=40)
    assert events[1]["audio_end_ms"] == pytest.approx(2000, abs=40)
    assert events[3]["audio_start_ms"] == pytest.approx(3200, abs=40)
    assert events[4]["audio_end_ms"] == pytest.approx(4000, abs=40)
    commands = session.commands()
    assert flushes(commands) == [Flush(first, False), Flush(second, False)]
    # Each item holds its turn: prefix padding + speech + the silence that ended it, no more.
    assert chunk_samples(commands, first) / 16000 == pytest.approx(0.3 + 1.0 + 0.5, abs=0.07)
    assert chunk_samples(commands, second) / 16000 == pytest.approx(0.3 + 0.5 + 0.5, abs=0.07)
    # Silence after the last turn is no item: final closes once the turns complete.
    assert send(session, type="input_audio_buffer.commit", final=True) == []
    session.recognizer_flushed(first, words(" ah"))
    session.recognizer_flushed(second, words(" oh"))
    assert [e["transcript"] for e in drain(session) if e["type"] == COMPLETED] == ["ah", "oh"]
    assert session.wants_close


def test_server_vad_manual_commit_clear_and_switch_off():
    session = make(vad_factory=EnergyScorer)
    update(session, turn_detection={"type": "server_vad", "silence_duration_ms": 300})
    stream(session, silence(0.5, 16000), 16000)
    error = only_error(send(session, type="input_audio_buffer.commit"))
    assert error["code"] == "input_audio_buffer_commit_empty" and "server_vad" in error["message"]
    assert types(stream(session, tone(0.5, 16000), 16000)) == ["input_audio_buffer.speech_started"]
    assert types(send(session, type="input_audio_buffer.clear")) == ["input_audio_buffer.cleared"]
    commands = session.commands()
    assert isinstance(commands[-1], Clear)
    # The turn was cleared: speech goes on, so a new turn starts for a new item.
    events = stream(session, tone(0.3, 16000), 16000)
    assert types(events) == ["input_audio_buffer.speech_started"]
    assert events[0]["item_id"] != commands[-1].item_id
    (committed,) = send(session, type="input_audio_buffer.commit")  # commit mid-turn
    assert committed["item_id"] == events[0]["item_id"]
    (updated,) = update(session, turn_detection=None)
    assert updated["session"]["audio"]["input"]["turn_detection"] is None
    assert (
        stream(session, silence(1.0, 16000), 16000) == []
    )  # no VAD: silence is audio like any other
    assert types(send(session, type="input_audio_buffer.commit")) == [
        "input_audio_buffer.committed"
    ]


def test_server_vad_unavailable_is_an_error_not_a_crash():
    def broken():
        raise RuntimeError("no VAD model here")

    session = make(vad_factory=broken)
    error = only_error(update(session, turn_detection={"type": "server_vad"}))
    assert error["type"] == "server_error" and "no VAD model here" in error["message"]
    assert session.config.turn_detection is None


def test_server_vad_with_silero_on_speech_at_24_khz():
    speech = load_audio_file(DATA / "beckett.wav", rate=24000)
    session = make()
    update(
        session, format={"type": "audio/pcm", "rate": 24000}, turn_detection={"type": "server_vad"}
    )
    audio = np.concatenate([silence(0.5, 24000), speech, silence(1.0, 24000)])
    events = stream(session, audio, 24000, chunk_seconds=0.05)
    assert "error" not in types(events)
    started = [e for e in events if e["type"] == "input_audio_buffer.speech_started"]
    stopped = [e for e in events if e["type"] == "input_audio_buffer.speech_stopped"]
    committed = [e for e in events if e["type"] == "input_audio_buffer.committed"]
    assert 4 <= len(started) <= 8 and len(started) == len(stopped) == len(committed)  # six phrases
    assert 200 <= started[0]["audio_start_ms"] <= 1500
    for a, b, c in zip(started, stopped, committed, strict=True):
        assert a["item_id"] == b["item_id"] == c["item_id"]
        assert a["audio_start_ms"] < b["audio_end_ms"]
    assert stopped[-1]["audio_end_ms"] <= 10_600
    assert [f.item_id for f in flushes(session.commands())] == [c["item_id"] for c in committed]

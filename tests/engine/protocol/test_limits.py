"""How much audio a session takes: the append checks, the backlog bound, flood control."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_rt.engine.audio.codecs import PCM16, PCMU, AudioFormat, float_to_pcm16
from desktop_rt.engine.protocol.events import InputAudioBufferAppend
from desktop_rt.engine.protocol.limits import SessionLimits, backlog_room, check_append
from desktop_rt.engine.protocol.session_config import ProtocolError
from tests.support.session_support import append, chunk_samples, drain, make, only_error, tone


def test_check_append_names_each_refusal():
    limits = SessionLimits(max_backlog_seconds=1.0, max_append_bytes=40_000)
    pcm = AudioFormat(PCM16, 16_000)
    check_append(bytes(3200), pcm, limits, backlog=0.0)  # 0.1 s: taken
    refusals = [
        (bytes(30_002), pcm, 0.0, "audio_too_large"),  # over 40_000 base64 characters
        (bytes(3201), pcm, 0.0, "invalid_audio"),  # an odd PCM16 byte count
        (bytes(16_000), AudioFormat(PCMU, 8_000), 0.0, "audio_too_large"),  # 2 s in one append
        (bytes(3200), pcm, 0.95, "audio_backlog_full"),
    ]
    for raw, fmt, backlog, code in refusals:
        with pytest.raises(ProtocolError) as info:
            check_append(raw, fmt, limits, backlog)
        assert (info.value.code, info.value.param) == (code, "audio"), code


def test_backlog_room_is_what_is_left_in_samples():
    limits = SessionLimits(max_backlog_seconds=1.0)
    assert backlog_room(limits, 0.0) == 16_000
    assert backlog_room(limits, 0.25) == 12_000
    assert backlog_room(limits, 1.5) == 0


def test_too_large_appends_are_rejected():
    session = make(limits=SessionLimits(max_append_bytes=4000))
    assert only_error(append(session, bytes(4000)))["code"] == "audio_too_large"
    session.receive_event(InputAudioBufferAppend(bytes(4000), event_id="direct"))
    error = only_error(drain(session))
    assert (error["code"], error["event_id"]) == ("audio_too_large", "direct")
    assert append(session, bytes(2000)) == []


# --- flood control -------------------------------------------------------------------------


def test_without_a_queue_backlog_full_drops_audio_until_the_worker_catches_up():
    # The desktop window's session: a microphone cannot wait, so what does not fit is dropped.
    session = make(limits=SessionLimits(max_backlog_seconds=1.0, max_queued_bytes=0))
    chunk = float_to_pcm16(tone(0.4, 16000))
    assert append(session, chunk) == [] and append(session, chunk) == []
    error = only_error(append(session, chunk))
    assert (
        error["code"] == "audio_backlog_full"
        and "faster than the model transcribes" in error["message"]
    )
    assert chunk_samples(session.commands()) == 12800
    session.audio_consumed(0.4)
    assert append(session, chunk) == []
    assert (
        only_error(append(session, float_to_pcm16(tone(1.2, 16000))))["code"] == "audio_too_large"
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6000), st.floats(0, 0.5)), max_size=60),
    st.sampled_from([0, 20_000, 1 << 20]),
)
def test_backlog_stays_bounded_under_flooding(ops, queue_bytes):
    limit = 0.5
    session = make(limits=SessionLimits(max_backlog_seconds=limit, max_queued_bytes=queue_bytes))
    handed = consumed = 0.0
    for n, seconds in ops:
        events = append(session, bytes(2 * n))
        assert all(e["error"]["code"] in ("audio_backlog_full", "audio_too_large") for e in events)
        handed += chunk_samples(session.commands()) / 16000
        if seconds > 0.25:
            session.audio_consumed(seconds)
            consumed = min(handed, consumed + seconds)
        assert handed - consumed <= limit + 1e-9
        assert session.backlog_seconds <= limit + 1e-9

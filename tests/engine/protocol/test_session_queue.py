"""The input queue: large appends are taken whole and handed to the worker as it has room.

Issue 16, bug 2: a 1 MiB append was refused (``audio_too_large``); a client that sends a whole
recording as fast as the socket allows must get all of it transcribed, in order. Bug 4: a
client that names no format sends OpenAI's PCM16 at 24 kHz.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop_rt.engine.audio.codecs import float_to_pcm16, pcm16_to_float
from desktop_rt.engine.protocol.events import AudioChunk, Clear, Configure, Flush
from desktop_rt.engine.protocol.limits import SessionLimits
from desktop_rt.engine.protocol.session import RealtimeSession
from tests.support.session_support import (
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
)

MIB = 1024 * 1024


class FakeWorker:
    """Takes the session's commands and consumes the audio, as the inference worker does."""

    def __init__(self, session: RealtimeSession):
        self.session = session
        self.chunks: list[AudioChunk] = []
        self.commands: list = []

    def take(self) -> None:
        for command in self.session.commands():
            self.commands.append(command)
            if isinstance(command, AudioChunk):
                self.chunks.append(command)

    def run(self, step_seconds: float = 8.0) -> None:
        """Consume everything handed, a turn at a time, until the session hands no more."""
        self.take()
        while self.session.backlog_seconds > 0:
            assert self.session.backlog_seconds <= self.session.limits.max_backlog_seconds + 1e-9
            self.session.audio_consumed(min(step_seconds, self.session.backlog_seconds))
            self.take()

    @property
    def samples(self) -> np.ndarray:
        return np.concatenate([c.samples for c in self.chunks])


def test_a_one_mib_append_is_taken_whole_and_handed_over_as_the_worker_has_room():
    session = make()  # 16 kHz: 1 MiB is 32.8 s, more than the 30 s backlog
    assert append(session, bytes(MIB)) == []  # was audio_too_large
    worker = FakeWorker(session)
    worker.take()
    assert 0 < session.backlog_seconds <= 30.0 and session.queued_bytes > 0
    assert send(session, type="input_audio_buffer.commit") == []  # it waits behind the audio
    worker.run()
    (committed,) = drain(session)  # so all of it is the item's
    assert committed["type"] == "input_audio_buffer.committed"
    assert session.queued_bytes == 0
    assert chunk_samples(worker.commands) == MIB // 2
    assert flushes(worker.commands) == [Flush(committed["item_id"], final=False)]
    assert isinstance(worker.commands[-1], Flush)  # after every chunk of the item


def test_events_after_queued_audio_wait_for_it_in_order():
    session = make(limits=SessionLimits(max_backlog_seconds=2.0))
    audio = tone(5.0, 16000)
    assert append(session, float_to_pcm16(audio), event_id="a1") == []
    assert (
        send(
            session,
            type="session.update",
            session={"audio": {"input": {"transcription": {"language": "de"}}}},
        )
        == []
    )
    assert append(session, b"\x00\x01\x02", event_id="odd") == []  # checked at its turn
    assert send(session, type="input_audio_buffer.commit", event_id="c1") == []
    worker = FakeWorker(session)
    worker.run(step_seconds=0.5)
    events = drain(session)
    assert types(events) == ["session.updated", "error", "input_audio_buffer.committed"]
    assert (events[1]["error"]["code"], events[1]["error"]["event_id"]) == ("invalid_audio", "odd")
    configure = worker.commands.index(Configure("de", None))
    assert chunk_samples(worker.commands[:configure]) == 5 * 16000  # all the audio came first
    assert np.array_equal(worker.samples, pcm16_to_float(float_to_pcm16(audio)))


def test_a_whole_recording_in_10_s_appends_is_all_transcribed_at_24_khz():
    session = RealtimeSession(model="whisper-base")  # no format named: OpenAI's 24 kHz
    session.start()
    drain(session)
    rate = 24_000
    five_minutes = np.concatenate([tone(10.0, rate, 0.3 + 0.01 * i) for i in range(30)])
    raw = float_to_pcm16(five_minutes)
    step = 10 * rate * 2
    for i in range(0, len(raw), step):
        assert append(session, raw[i : i + step]) == []  # as fast as the socket allows
    assert send(session, type="input_audio_buffer.commit", final=True) == []
    worker = FakeWorker(session)
    worker.run()
    (committed,) = drain(session)
    assert chunk_samples(worker.commands) == pytest.approx(300 * 16000, abs=2)
    assert flushes(worker.commands) == [Flush(committed["item_id"], final=True)]
    session.recognizer_flushed(committed["item_id"], [])
    (done,) = drain(session)
    assert done["usage"]["seconds"] == pytest.approx(300.0, abs=1e-3)
    assert session.wants_close


def test_a_client_that_keeps_flooding_gets_audio_backlog_full_and_the_session_goes_on():
    limits = SessionLimits(max_backlog_seconds=1.0, max_queued_bytes=72_000)
    session = make(limits=limits)
    second = float_to_pcm16(tone(1.0, 16000))  # 32 000 bytes
    assert append(session, second) == [] and append(session, second) == []
    assert append(session, second) == []  # 0.75 s went to the worker (0.25 s kept free)
    error = only_error(append(session, second, event_id="flood"))
    assert (error["code"], error["event_id"]) == ("audio_backlog_full", "flood")
    assert "faster than the model" in error["message"]
    assert session.queued_bytes == 72_000
    FakeWorker(session).run()
    assert append(session, second) == []  # room again once the worker caught up


def test_a_clear_drops_the_queued_audio_at_once():
    session = make(limits=SessionLimits(max_backlog_seconds=1.0))
    append(session, float_to_pcm16(tone(4.0, 16000)))
    assert session.queued_bytes > 0
    (cleared,) = send(session, type="input_audio_buffer.clear")
    assert cleared["type"] == "input_audio_buffer.cleared" and session.queued_bytes == 0
    commands = session.commands()
    assert chunk_samples(commands) < 16000 and isinstance(commands[-1], Clear)


def test_the_input_ends_after_the_queued_audio_and_later_audio_is_refused():
    session = make(limits=SessionLimits(max_backlog_seconds=1.0))
    append(session, float_to_pcm16(tone(3.0, 16000)))
    assert send(session, type="input_audio_buffer.commit", final=True) == []  # waits its turn
    assert only_error(append(session, bytes(320)))["code"] == "input_ended"
    assert not session.wants_close
    worker = FakeWorker(session)
    worker.run()
    (committed,) = drain(session)
    assert chunk_samples(worker.commands) == 3 * 16000 and flushes(worker.commands)[0].final
    session.recognizer_flushed(committed["item_id"], [])
    assert types(drain(session)) == ["conversation.item.input_audio_transcription.completed"]
    assert session.wants_close


def test_end_input_applies_what_is_queued_first():
    session = make(limits=SessionLimits(max_backlog_seconds=1.0))
    append(session, float_to_pcm16(tone(2.5, 16000)))
    session.end_input()
    assert drain(session) == []
    worker = FakeWorker(session)
    worker.run()
    assert chunk_samples(worker.commands) == 40000
    (committed,) = drain(session)
    assert flushes(worker.commands) == [Flush(committed["item_id"], final=True)]


def test_without_a_queue_a_large_append_is_still_refused():
    # The desktop window's own session (a microphone cannot wait) keeps the old bound.
    session = make(limits=SessionLimits(max_queued_bytes=0))
    assert only_error(append(session, bytes(MIB)))["code"] == "audio_too_large"


def test_a_session_decodes_24_khz_until_the_client_names_a_rate():
    session = RealtimeSession(model="whisper-base")
    session.start()
    (created,) = drain(session)
    assert created["session"]["audio"]["input"]["format"]["rate"] == 24000
    append(session, float_to_pcm16(tone(1.0, 24000)))
    send(session, type="input_audio_buffer.commit")
    assert chunk_samples(session.commands()) == pytest.approx(16000, abs=1)  # one second
    update(session, format={"type": "audio/pcm", "rate": 16000})
    append(session, float_to_pcm16(tone(1.0, 16000)))
    send(session, type="input_audio_buffer.commit")
    assert chunk_samples(session.commands()) == 16000


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("append"), st.integers(1, 40_000)),
            st.tuples(st.just("consume"), st.floats(0.0, 1.0)),
            st.tuples(st.just("commit"), st.none()),
        ),
        max_size=40,
    )
)
def test_nothing_heard_is_lost_or_reordered(ops):
    """16 kHz PCM16 is handed over sample for sample: what the worker gets is what was sent."""
    session = make(limits=SessionLimits(max_backlog_seconds=0.5, max_queued_bytes=1 << 30))
    rng = np.random.default_rng(len(ops))
    sent: list[np.ndarray] = []
    worker = FakeWorker(session)
    for kind, value in ops:
        if kind == "append":
            raw = float_to_pcm16(rng.uniform(-0.5, 0.5, value).astype(np.float32))
            # A queued commit may be answered here, an empty one with an error; audio never is.
            events = append(session, raw)
            codes = {e["error"]["code"] for e in events if e["type"] == "error"}
            assert codes <= {"input_audio_buffer_commit_empty"}, events
            sent.append(pcm16_to_float(raw))
        elif kind == "consume":
            session.audio_consumed(value)
        else:
            send(session, type="input_audio_buffer.commit")
        worker.take()
        assert session.backlog_seconds <= 0.5 + 1e-9
    worker.run()
    if sent:
        assert np.array_equal(worker.samples, np.concatenate(sent))
    assert session.queued_bytes == 0

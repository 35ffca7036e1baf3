"""RealtimeSession under hostile clients: never raises, always answers well-formed events."""

from __future__ import annotations

import json

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from desktop_rt.engine.audio.codecs import float_to_pcm16
from desktop_rt.engine.protocol.events import (
    AudioChunk,
    Configure,
    Flush,
    ServerEvent,
    to_json,
)
from desktop_rt.engine.protocol.session import RealtimeSession, SessionLimits
from tests.support.session_support import COMPLETED, DELTA, EnergyScorer, b64, words

# --- hostile clients -----------------------------------------------------------------------

json_leaf = (
    st.none() | st.booleans() | st.integers(-100_000, 100_000) | st.floats() | st.text(max_size=8)
)
hostile_text = st.one_of(
    st.text(max_size=60),
    st.binary(max_size=20),
    st.recursive(
        json_leaf,
        lambda x: st.lists(x, max_size=3) | st.dictionaries(st.text(max_size=6), x, max_size=3),
        max_leaves=8,
    ).map(lambda v: json.dumps(v)),
)
valid_updates = st.sampled_from(
    [
        {"audio": {"input": {"format": {"type": "audio/pcm", "rate": 24000}}}},
        {"audio": {"input": {"format": {"type": "audio/pcmu"}}}},
        {"audio": {"input": {"turn_detection": {"type": "server_vad", "silence_duration_ms": 64}}}},
        {"audio": {"input": {"turn_detection": None}}},
        {"audio": {"input": {"transcription": {"language": "en", "prompt": "x"}}}},
        {"input_audio_format": "g711_alaw"},
        {"audio": {"input": {"format": {"type": "audio/pcm", "rate": 0}}}},
        {"model": 3},
    ]
)


@st.composite
def client_messages(draw):
    kind = draw(
        st.sampled_from(
            ["hostile"] * 4 + ["append"] * 10 + ["commit"] * 3 + ["clear", "update", "final"]
        )
    )
    if kind == "hostile":
        return draw(hostile_text)
    if kind == "append":
        amp = draw(st.sampled_from([0.0, 0.6]))
        n = draw(st.integers(0, 1600))
        raw = float_to_pcm16(
            np.full(n, amp, dtype=np.float32) * np.sign(np.sin(np.arange(n) / 3.0))
        )
        if draw(st.booleans()):
            raw = raw[: draw(st.integers(0, len(raw)))]
        return json.dumps({"type": "input_audio_buffer.append", "audio": b64(raw)})
    if kind == "update":
        return json.dumps({"type": "session.update", "session": draw(valid_updates)})
    event = {
        "commit": {"type": "input_audio_buffer.commit"},
        "final": {"type": "input_audio_buffer.commit", "final": True},
        "clear": {"type": "input_audio_buffer.clear"},
    }[kind]
    return json.dumps({**event, "event_id": draw(st.text(max_size=5))})


VAD_UPDATE = {
    "type": "session.update",
    "session": {
        "audio": {
            "input": {
                "turn_detection": {
                    "type": "server_vad",
                    "silence_duration_ms": 64,
                    "prefix_padding_ms": 32,
                }
            }
        }
    },
}
ACTIONS = ["client"] * 12 + ["words"] * 3 + ["flushed"] * 3 + ["consumed"] * 2 + ["failed", "end"]


def hostile_session(data) -> RealtimeSession:
    session = RealtimeSession(
        model="m",
        vad_factory=EnergyScorer,
        emit_tentative=data.draw(st.booleans()),
        limits=SessionLimits(max_backlog_seconds=1.0),
    )
    session.start()
    if data.draw(st.booleans()):
        session.receive_text(json.dumps(VAD_UPDATE))
    return session


def act(session: RealtimeSession, data, action: str, pick) -> None:
    """One drawn input: a client frame or one of the worker's results."""
    if action == "client":
        session.receive_text(data.draw(client_messages()))
    elif action == "words":
        session.recognizer_words(
            data.draw(pick),
            words(*data.draw(st.lists(st.text(max_size=4), max_size=3))),
            words(*data.draw(st.lists(st.text(max_size=4), max_size=3))),
        )
    elif action == "flushed":
        session.recognizer_flushed(
            data.draw(pick), words(*data.draw(st.lists(st.text(max_size=4), max_size=3)))
        )
    elif action == "consumed":
        session.audio_consumed(data.draw(st.floats(-1, 2)))
    elif action == "failed":
        session.recognizer_failed(data.draw(st.text(max_size=10)))
    else:
        session.end_input()


def drive(session: RealtimeSession, data) -> list[ServerEvent]:
    """Random inputs; checks the commands after each; returns every event."""
    out: list[ServerEvent] = []
    seen_items: list[str] = []
    flushed: list[str] = []
    for _ in range(data.draw(st.integers(1, 60))):
        action = data.draw(st.sampled_from(ACTIONS))
        act(session, data, action, st.sampled_from(flushed + seen_items + ["item_x"]))
        for command in session.commands():
            if isinstance(command, Flush):
                flushed.append(command.item_id)
            if not isinstance(command, Configure) and command.item_id not in seen_items:
                seen_items.append(command.item_id)
            if isinstance(command, AudioChunk):
                assert command.samples.dtype == np.float32 and len(command.samples)
        assert session.backlog_seconds <= 1.0 + 1e-9
        out += session.events_to_send()
    return out


def check_promises(wires: list[dict]) -> set[str]:
    """Well-formed events; items chain, complete once, after their commit, as their deltas."""
    assert wires[0]["type"] == "session.created"
    assert len({w["event_id"] for w in wires}) == len(wires)
    committed: dict[str, int] = {}
    completed: set[str] = set()
    deltas: dict[str, str] = {}
    previous = None
    for i, w in enumerate(wires):
        assert w["event_id"].startswith("event_") and isinstance(w["type"], str)
        if w["type"] == "error":
            assert (
                set(w["error"]) == {"type", "code", "message", "param", "event_id"}
                and w["error"]["message"]
            )
        elif w["type"] == "input_audio_buffer.committed":
            assert w["previous_item_id"] == previous and w["item_id"] not in committed
            previous = w["item_id"]
            committed[w["item_id"]] = i
        elif w["type"] == DELTA:
            assert w["item_id"] not in completed
            assert w["delta"] and (w["item_id"] in deltas or not w["delta"][0].isspace())
            deltas[w["item_id"]] = deltas.get(w["item_id"], "") + w["delta"]
        elif w["type"] == COMPLETED:
            assert committed[w["item_id"]] < i  # committed before completed
            assert w["transcript"] == deltas.pop(w["item_id"], "")
            assert w["item_id"] not in completed
            completed.add(w["item_id"])
    return completed


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_hostile_sessions_never_raise_and_keep_their_promises(data):
    session = hostile_session(data)
    wires = [json.loads(to_json(e)) for e in drive(session, data)]
    completed = check_promises(wires)
    if session.wants_close:
        assert session.state.name == "INPUT_ENDED"
    event(f"items completed: {min(len(completed), 3)}")
    event(
        f"speech turns: {min(sum(w['type'] == 'input_audio_buffer.speech_started' for w in wires), 2)}"
    )

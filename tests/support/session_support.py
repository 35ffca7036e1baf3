"""Helpers shared by the protocol tests: parsing frames, driving a RealtimeSession."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest

from desktop_rt.core_types import Word
from desktop_rt.engine.audio.codecs import PCM16, AudioFormat, float_to_pcm16
from desktop_rt.engine.protocol.events import AudioChunk, ClientEvent, Flush, to_wire
from desktop_rt.engine.protocol.parsing import parse_client_event
from desktop_rt.engine.protocol.session import RealtimeSession
from desktop_rt.engine.protocol.session_config import ProtocolError

DELTA = "conversation.item.input_audio_transcription.delta"
COMPLETED = "conversation.item.input_audio_transcription.completed"
TENTATIVE = "conversation.item.input_audio_transcription.tentative"


def parse(obj, **kwargs) -> ClientEvent:
    """``obj`` as a JSON text frame, parsed."""
    return parse_client_event(json.dumps(obj), **kwargs)


def parse_error(obj_or_text, **kwargs) -> ProtocolError:
    """The well-formed :class:`ProtocolError` parsing ``obj_or_text`` raises."""
    text = obj_or_text if isinstance(obj_or_text, (str, bytes)) else json.dumps(obj_or_text)
    with pytest.raises(ProtocolError) as info:
        parse_client_event(text, **kwargs)
    error = info.value
    assert isinstance(error.code, str) and error.code
    assert isinstance(error.message, str) and error.message
    assert error.type == "invalid_request_error"
    return error


class EnergyScorer:
    """A deterministic SpeechProbability: loud frames are speech."""

    def __call__(self, frame: np.ndarray) -> float:
        return 1.0 if float(np.sqrt(np.mean(np.square(frame)))) > 0.05 else 0.0

    def reset(self) -> None:
        pass


def words(*texts: str) -> list[Word]:
    return [Word(t, i, i + 1) for i, t in enumerate(texts)]


def tone(seconds: float, rate: int, amplitude: float = 0.5) -> np.ndarray:
    t = np.arange(round(seconds * rate)) / rate
    return (amplitude * np.sin(2 * np.pi * 220 * t)).astype(np.float32)


def silence(seconds: float, rate: int) -> np.ndarray:
    return np.zeros(round(seconds * rate), dtype=np.float32)


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


PCM16_16K = AudioFormat(PCM16, 16000)


def make(**kwargs) -> RealtimeSession:
    """A started session, its ``session.created`` drained. Its input is PCM16 at 16 kHz (as the
    desktop window's session) unless ``input_format`` says otherwise, so the 16 kHz clips and
    ``PCM_100MS`` map one sample to one; a client's session defaults to 24 kHz."""
    kwargs.setdefault("input_format", PCM16_16K)
    session = RealtimeSession(model="whisper-base", **kwargs)
    session.start()
    session.events_to_send()
    return session


def send(_session: RealtimeSession, **event) -> list[dict]:
    _session.receive_text(json.dumps(event))
    return [to_wire(e) for e in _session.events_to_send()]


def append(session: RealtimeSession, raw: bytes, **extra) -> list[dict]:
    return send(session, type="input_audio_buffer.append", audio=b64(raw), **extra)


def update(session: RealtimeSession, **audio_input) -> list[dict]:
    return send(
        session,
        type="session.update",
        session={"type": "transcription", "audio": {"input": audio_input}},
    )


def types(events: list[dict]) -> list[str]:
    return [e["type"] for e in events]


def only_error(events: list[dict]) -> dict:
    assert types(events) == ["error"], events
    return events[0]["error"]


def flushes(commands) -> list[Flush]:
    return [c for c in commands if isinstance(c, Flush)]


def chunk_samples(commands, item_id: str | None = None) -> int:
    return sum(
        len(c.samples)
        for c in commands
        if isinstance(c, AudioChunk) and item_id in (None, c.item_id)
    )


def drain(session: RealtimeSession) -> list[dict]:
    return [to_wire(e) for e in session.events_to_send()]


PCM_100MS = float_to_pcm16(tone(0.1, 16000))

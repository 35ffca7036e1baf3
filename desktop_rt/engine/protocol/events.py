"""Realtime protocol events as frozen dataclasses; dicts exist only at the JSON edge.

- Client events come from :func:`~desktop_rt.engine.protocol.parsing.parse_client_event`.
- Server events go out through :func:`to_wire` / :func:`to_json`; each has a unique
  ``event_id`` ("event_" + random). An item ends with :class:`TranscriptionCompleted`, or with
  :class:`TranscriptionFailed` (a kind of it, so in-process consumers finish the item either way).
- Commands are what a session asks of the model worker: :class:`AudioChunk`, :class:`Flush`,
  :class:`Clear`, :class:`Configure`.
"""

from __future__ import annotations

import json
import math
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from desktop_rt.engine.protocol.respellings import Respelling
from desktop_rt.engine.protocol.session_config import ProtocolError, SessionConfig, SessionPatch

__all__ = [
    "ProtocolError",
    "DEFAULT_MAX_APPEND_BYTES",
    "new_id",
    "SessionUpdate",
    "InputAudioBufferAppend",
    "InputAudioBufferCommit",
    "InputAudioBufferClear",
    "ClientEvent",
    "ServerEvent",
    "SessionCreated",
    "SessionUpdated",
    "InputAudioBufferCommitted",
    "InputAudioBufferCleared",
    "InputAudioBufferSpeechStarted",
    "InputAudioBufferSpeechStopped",
    "InputAudioBufferTimeoutTriggered",
    "LogProb",
    "TranscriptionDelta",
    "TranscriptionTentative",
    "TranscriptionCompleted",
    "TranscriptionFailed",
    "ErrorEvent",
    "AudioChunk",
    "Flush",
    "Clear",
    "Configure",
    "Respelling",
    "Command",
    "to_wire",
    "to_json",
]

DEFAULT_MAX_APPEND_BYTES = 15 * 1024 * 1024
"""Most base64 characters one ``input_audio_buffer.append`` may carry (OpenAI's 15 MiB)."""


def new_id(prefix: str) -> str:
    """``prefix`` + "_" + 20 random hex digits: "event_...", "item_...", "sess_..."."""
    return f"{prefix}_{secrets.token_hex(10)}"


# --- client events ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SessionUpdate:
    """``session.update`` (GA) or ``transcription_session.update`` (beta, ``beta=True``)."""

    patch: SessionPatch = SessionPatch()
    beta: bool = False
    event_id: str | None = None


@dataclass(frozen=True)
class InputAudioBufferAppend:
    """``input_audio_buffer.append`` with its audio already base64-decoded (wire-format bytes)."""

    audio: bytes
    event_id: str | None = None


@dataclass(frozen=True)
class InputAudioBufferCommit:
    """``input_audio_buffer.commit``; ``final`` (llama.cpp's extension) ends the input."""

    final: bool = False
    event_id: str | None = None


@dataclass(frozen=True)
class InputAudioBufferClear:
    event_id: str | None = None


ClientEvent = (
    SessionUpdate | InputAudioBufferAppend | InputAudioBufferCommit | InputAudioBufferClear
)


# --- server events ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ServerEvent:
    """Base of every server event: ``type`` names it on the wire, ``event_id`` is unique."""

    type: ClassVar[str] = ""
    event_id: str = field(default_factory=lambda: new_id("event"), kw_only=True)

    def payload(self) -> dict[str, Any]:
        """The event's fields besides ``type`` and ``event_id``, as JSON-ready values."""
        return {}


@dataclass(frozen=True)
class SessionCreated(ServerEvent):
    type: ClassVar[str] = "session.created"
    session: SessionConfig

    def payload(self) -> dict[str, Any]:
        return {"session": self.session.to_wire()}


@dataclass(frozen=True)
class SessionUpdated(ServerEvent):
    type: ClassVar[str] = "session.updated"
    session: SessionConfig

    def payload(self) -> dict[str, Any]:
        return {"session": self.session.to_wire()}


@dataclass(frozen=True)
class InputAudioBufferCommitted(ServerEvent):
    type: ClassVar[str] = "input_audio_buffer.committed"
    item_id: str
    previous_item_id: str | None

    def payload(self) -> dict[str, Any]:
        return {"previous_item_id": self.previous_item_id, "item_id": self.item_id}


@dataclass(frozen=True)
class InputAudioBufferCleared(ServerEvent):
    type: ClassVar[str] = "input_audio_buffer.cleared"


@dataclass(frozen=True)
class InputAudioBufferSpeechStarted(ServerEvent):
    type: ClassVar[str] = "input_audio_buffer.speech_started"
    item_id: str
    audio_start_ms: int

    def payload(self) -> dict[str, Any]:
        return {"audio_start_ms": self.audio_start_ms, "item_id": self.item_id}


@dataclass(frozen=True)
class InputAudioBufferSpeechStopped(ServerEvent):
    type: ClassVar[str] = "input_audio_buffer.speech_stopped"
    item_id: str
    audio_end_ms: int

    def payload(self) -> dict[str, Any]:
        return {"audio_end_ms": self.audio_end_ms, "item_id": self.item_id}


@dataclass(frozen=True)
class InputAudioBufferTimeoutTriggered(ServerEvent):
    """No speech for ``turn_detection.idle_timeout_ms`` of audio, from ``audio_start_ms``."""

    type: ClassVar[str] = "input_audio_buffer.timeout_triggered"
    item_id: str
    audio_start_ms: int
    audio_end_ms: int

    def payload(self) -> dict[str, Any]:
        return {
            "audio_start_ms": self.audio_start_ms,
            "audio_end_ms": self.audio_end_ms,
            "item_id": self.item_id,
        }


_MIN_PROBABILITY = 1e-10  # so a word the model gave probability 0 still has a finite logprob


@dataclass(frozen=True)
class LogProb:
    """One ``logprobs`` entry: a word as sent in a delta and the log of its probability."""

    token: str
    logprob: float

    @classmethod
    def of(cls, token: str, probability: float) -> LogProb:
        p = probability if math.isfinite(probability) else 0.0
        return cls(token, math.log(min(1.0, max(_MIN_PROBABILITY, p))))

    def to_wire(self) -> dict[str, Any]:
        return {
            "token": self.token,
            "logprob": self.logprob,
            "bytes": list(self.token.encode("utf-8", "surrogatepass")),
        }


def _logprobs_wire(logprobs: Sequence[LogProb] | None) -> dict[str, Any]:
    return {} if logprobs is None else {"logprobs": [lp.to_wire() for lp in logprobs]}


@dataclass(frozen=True)
class TranscriptionDelta(ServerEvent):
    """``logprobs``: one entry per word of ``delta``, when the session includes them."""

    type: ClassVar[str] = "conversation.item.input_audio_transcription.delta"
    item_id: str
    delta: str
    logprobs: tuple[LogProb, ...] | None = None

    def payload(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "content_index": 0,
            "delta": self.delta,
            **_logprobs_wire(self.logprobs),
        }


@dataclass(frozen=True)
class TranscriptionTentative(ServerEvent):
    """Non-standard: the words not yet committed for an item (replaces the previous text).

    Only a session made with ``emit_tentative=True`` (the app's own window) produces it.
    """

    type: ClassVar[str] = "conversation.item.input_audio_transcription.tentative"
    item_id: str
    text: str

    def payload(self) -> dict[str, Any]:
        return {"item_id": self.item_id, "content_index": 0, "text": self.text}


@dataclass(frozen=True)
class TranscriptionCompleted(ServerEvent):
    """``transcript`` is the item's deltas joined, or its whole decode when the recognizer
    heard the item whole once it ended (authoritative); ``audio_seconds``: its audio (usage).

    ``language``: the item's language when known (sent as ``languages``); ``logprobs``: every
    word's, when the session includes them.
    """

    type: ClassVar[str] = "conversation.item.input_audio_transcription.completed"
    item_id: str
    transcript: str
    audio_seconds: float
    language: str | None = None
    logprobs: tuple[LogProb, ...] | None = None

    def payload(self) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "item_id": self.item_id,
            "content_index": 0,
            "transcript": self.transcript,
            "usage": {"type": "duration", "seconds": round(self.audio_seconds, 3)},
        }
        if self.language is not None:
            payload["languages"] = [{"code": self.language}]
        return {**payload, **_logprobs_wire(self.logprobs)}


@dataclass(frozen=True)
class TranscriptionFailed(TranscriptionCompleted):
    """The item ended, but the recognizer failed on part of its audio: ``...failed`` on the
    wire, with the error; ``transcript`` (not sent) is what its deltas said before and after."""

    type: ClassVar[str] = "conversation.item.input_audio_transcription.failed"
    message: str = ""
    code: str = "recognizer_failed"

    def payload(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "content_index": 0,
            "error": {
                "type": "server_error",
                "code": self.code,
                "message": self.message,
                "param": None,
            },
        }


@dataclass(frozen=True)
class ErrorEvent(ServerEvent):
    """``error``: the session goes on. ``client_event_id`` names the client event at fault."""

    type: ClassVar[str] = "error"
    message: str
    code: str | None = None
    param: str | None = None
    error_type: str = "invalid_request_error"
    client_event_id: str | None = None

    @classmethod
    def from_error(cls, error: ProtocolError) -> ErrorEvent:
        return cls(error.message, error.code, error.param, error.type, error.event_id)

    def payload(self) -> dict[str, Any]:
        return {
            "error": {
                "type": self.error_type,
                "code": self.code,
                "message": self.message,
                "param": self.param,
                "event_id": self.client_event_id,
            }
        }


def to_wire(event: ServerEvent) -> dict[str, Any]:
    """The JSON object of a server event."""
    return {"type": event.type, "event_id": event.event_id, **event.payload()}


def to_json(event: ServerEvent) -> str:
    """Compact JSON, ASCII only (so even a lone surrogate a client sent encodes safely)."""
    return json.dumps(to_wire(event), allow_nan=False, separators=(",", ":"))


# --- commands to the model worker ------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class AudioChunk:
    """Audio of ``item_id`` for the recognizer: float32 mono 16 kHz."""

    item_id: str
    samples: np.ndarray


@dataclass(frozen=True)
class Flush:
    """Transcribe all audio of ``item_id`` to the end, then call ``recognizer_flushed``.

    ``final``: no audio follows for this session. Answer every Flush, even for an item whose
    audio never reached the recognizer (with no words).
    """

    item_id: str
    final: bool


@dataclass(frozen=True)
class Clear:
    """Drop the buffered audio and tentative words of ``item_id``; it will get no more audio."""

    item_id: str


@dataclass(frozen=True)
class Configure:
    """Transcribe from now on with this language (ISO code, None: detect) and prompt; the
    committed text later prompts are built from takes ``respellings``."""

    language: str | None
    prompt: str | None
    respellings: tuple[Respelling, ...] = ()


Command = AudioChunk | Flush | Clear | Configure

"""Client frames into client events: :func:`parse_client_event` is the protocol's only input edge.

A text frame becomes one of :data:`~desktop_rt.engine.protocol.events.ClientEvent`; anything
else (binary frames, bad JSON, unknown types, invalid fields) raises :class:`ProtocolError`
whose message says what to fix and whose ``event_id`` is the client's, when it sent one.
Audio is base64-decoded here and bounded by ``max_append_bytes``; its format is the session's.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from desktop_rt.engine.audio.codecs import AudioFormat
from desktop_rt.engine.protocol.events import (
    DEFAULT_MAX_APPEND_BYTES,
    ClientEvent,
    InputAudioBufferAppend,
    InputAudioBufferClear,
    InputAudioBufferCommit,
    SessionUpdate,
)
from desktop_rt.engine.protocol.formats import DEFAULT_FORMAT, describe_format
from desktop_rt.engine.protocol.session_config import (
    ProtocolError,
    SessionPatch,
    parse_session_patch,
)

__all__ = ["CLIENT_TYPES", "CONVERSATION_TYPES", "parse_client_event"]

CLIENT_TYPES = (
    "session.update",
    "transcription_session.update",
    "input_audio_buffer.append",
    "input_audio_buffer.commit",
    "input_audio_buffer.clear",
)
CONVERSATION_TYPES = (
    "conversation.item.create",
    "conversation.item.retrieve",
    "conversation.item.truncate",
    "conversation.item.delete",
    "response.create",
    "response.cancel",
    "output_audio_buffer.clear",
)
"""OpenAI's client events for conversations (responses, output audio): a transcription
session has none, so they are refused as ``unknown_event_type`` with a message saying so."""


def _decode_audio(value: object, fmt: AudioFormat, max_bytes: int) -> bytes:
    expected = f"'audio' must be a base64 string of {describe_format(fmt)}"
    if value is None:
        raise ProtocolError(
            f"input_audio_buffer.append: missing 'audio'; {expected}",
            code="missing_required_parameter",
            param="audio",
        )
    if not isinstance(value, str):
        raise ProtocolError(
            f"input_audio_buffer.append: {expected}", code="invalid_type", param="audio"
        )
    if len(value) > max_bytes:
        raise ProtocolError(
            f"input_audio_buffer.append: 'audio' has {len(value)} base64 characters, more than the "
            f"{max_bytes} allowed; send smaller chunks",
            code="audio_too_large",
            param="audio",
        )
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ProtocolError(
            f"input_audio_buffer.append: {expected} (it is not valid base64)",
            code="invalid_audio",
            param="audio",
        ) from None


def _parse_object(obj: dict[str, Any], fmt: AudioFormat, max_append_bytes: int) -> ClientEvent:
    event_id = obj.get("event_id")
    if event_id is not None and not isinstance(event_id, str):
        raise ProtocolError("'event_id' must be a string", code="invalid_type", param="event_id")
    try:
        kind = obj.get("type")
        if kind is None:
            raise ProtocolError(
                f"missing 'type'; use one of {', '.join(CLIENT_TYPES)}",
                code="missing_required_parameter",
                param="type",
            )
        if not isinstance(kind, str):
            raise ProtocolError("'type' must be a string", code="invalid_type", param="type")
        if kind in ("session.update", "transcription_session.update"):
            session = obj.get("session")
            patch = SessionPatch() if session is None else parse_session_patch(session)
            return SessionUpdate(
                patch, beta=kind.startswith("transcription_session"), event_id=event_id
            )
        if kind == "input_audio_buffer.append":
            return InputAudioBufferAppend(
                _decode_audio(obj.get("audio"), fmt, max_append_bytes), event_id
            )
        if kind == "input_audio_buffer.commit":
            final = obj.get("final", False)
            if final is None:
                final = False
            if not isinstance(final, bool):
                raise ProtocolError(
                    "input_audio_buffer.commit: 'final' must be true or false",
                    code="invalid_type",
                    param="final",
                )
            return InputAudioBufferCommit(final, event_id)
        if kind == "input_audio_buffer.clear":
            return InputAudioBufferClear(event_id)
        if kind in CONVERSATION_TYPES:
            raise ProtocolError(
                f"'{kind}' belongs to OpenAI's conversation sessions; this server only transcribes "
                f"(it accepts {', '.join(CLIENT_TYPES)})",
                code="unknown_event_type",
                param="type",
            )
        raise ProtocolError(
            f"unknown event type {kind[:100]!r}; this transcription server accepts {', '.join(CLIENT_TYPES)}",
            code="unknown_event_type",
            param="type",
        )
    except ProtocolError as exc:
        exc.event_id = event_id
        raise


def parse_client_event(
    text: str | bytes,
    *,
    audio_format: AudioFormat = DEFAULT_FORMAT,
    max_append_bytes: int = DEFAULT_MAX_APPEND_BYTES,
) -> ClientEvent:
    """Read one text frame. ``audio_format`` is the session's (it words audio errors).

    Raises :class:`ProtocolError` for anything else, including binary frames.
    """
    if not isinstance(text, str):
        raise ProtocolError(
            "binary frames are not accepted; send each event as a JSON text frame",
            code="invalid_frame",
        )
    try:
        obj = json.loads(text)
    except RecursionError:
        raise ProtocolError("the event is nested too deeply to read", code="invalid_json") from None
    except ValueError as exc:
        raise ProtocolError(f"the event is not valid JSON: {exc}", code="invalid_json") from None
    if not isinstance(obj, dict):
        raise ProtocolError("an event must be a JSON object with a 'type'", code="invalid_event")
    return _parse_object(obj, audio_format, max_append_bytes)

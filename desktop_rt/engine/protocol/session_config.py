"""The settings of one transcription session, and reading them from ``session.update`` payloads.

:class:`SessionConfig` is the current state (it renders the wire ``session`` object);
:func:`parse_session_patch` reads the ``session`` of a ``session.update`` (GA shape, under
``audio.input``) or of a beta ``transcription_session.update`` (``input_audio_format``,
``input_audio_transcription``, ``turn_detection``) into a :class:`SessionPatch` holding only what
the client named. Invalid values raise :class:`ProtocolError`; nothing here has I/O.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass, replace
from typing import Any, Literal

from desktop_rt.engine.audio.codecs import (
    PCM16,
    PCMA,
    PCMU,
    SAMPLE_RATE,
    SUPPORTED_FORMATS,
    AudioFormat,
)
from desktop_rt.engine.audio.vad import TurnDetectorSettings
from desktop_rt.errors import DesktopRtError

__all__ = [
    "ProtocolError",
    "UNSET",
    "MIN_RATE",
    "MAX_RATE",
    "OPENAI_PCM_RATE",
    "G711_RATE",
    "SessionConfig",
    "SessionPatch",
    "parse_session_patch",
    "describe_format",
]

MIN_RATE = 8_000
MAX_RATE = 48_000
OPENAI_PCM_RATE = 24_000
"""The rate OpenAI's ``audio/pcm`` (and beta ``pcm16``) means when a client names no rate."""
G711_RATE = 8_000

_BETA_FORMATS = {
    "pcm16": AudioFormat(PCM16, OPENAI_PCM_RATE),
    "g711_ulaw": AudioFormat(PCMU, G711_RATE),
    "g711_alaw": AudioFormat(PCMA, G711_RATE),
}
_NOISE_REDUCTION_TYPES = ("near_field", "far_field")
_LANGUAGE = re.compile(r"[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*")
_MAX_PADDING_MS = 10_000
_MAX_SILENCE_MS = 60_000


class ProtocolError(DesktopRtError):
    """A client event that cannot be honoured; becomes an ``error`` event, never a closed socket.

    ``type`` is OpenAI's error type, ``code`` a stable machine-readable reason, ``param`` the
    dotted path of the offending field, ``event_id`` the client's ``event_id`` when it sent one.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str = "invalid_value",
        param: str | None = None,
        type: str = "invalid_request_error",
        event_id: str | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.code = code
        self.param = param
        self.type = type
        self.event_id = event_id


class _Unset(enum.Enum):
    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET = _Unset.UNSET
"""Marks a :class:`SessionPatch` field the client did not name."""

Unset = Literal[_Unset.UNSET]


def describe_format(fmt: AudioFormat) -> str:
    """What a client must send, in words: "PCM16 little-endian mono at 24000 Hz"."""
    kind = {PCM16: "PCM16 little-endian", PCMU: "G.711 mu-law", PCMA: "G.711 A-law"}.get(
        fmt.type, fmt.type
    )
    return f"{kind} mono at {fmt.rate} Hz"


@dataclass(frozen=True)
class SessionPatch:
    """The settings a ``session.update`` names; :data:`UNSET` fields stay as they are.

    ``model`` is the model the client named, if any. The connection's model is fixed, so the
    session ignores it; the server may use it to choose a model before the session exists.
    """

    format: AudioFormat | Unset = UNSET
    language: str | None | Unset = UNSET
    prompt: str | None | Unset = UNSET
    turn_detection: TurnDetectorSettings | None | Unset = UNSET
    model: str | None = None


@dataclass(frozen=True)
class SessionConfig:
    """The current settings of a session; :meth:`to_wire` is the protocol's ``session`` object."""

    id: str
    model: str
    format: AudioFormat = AudioFormat(PCM16, SAMPLE_RATE)
    language: str | None = None
    prompt: str | None = None
    turn_detection: TurnDetectorSettings | None = None

    def apply(self, patch: SessionPatch) -> SessionConfig:
        """The settings after ``patch``; the model never changes."""
        changes = {
            name: getattr(patch, name)
            for name in ("format", "language", "prompt", "turn_detection")
            if getattr(patch, name) is not UNSET
        }
        return replace(self, **changes)

    def to_wire(self) -> dict[str, Any]:
        fmt: dict[str, Any] = {"type": self.format.type}
        if self.format.type == PCM16:
            fmt["rate"] = self.format.rate
        turn = None
        if self.turn_detection is not None:
            turn = {
                "type": "server_vad",
                "threshold": self.turn_detection.threshold,
                "prefix_padding_ms": self.turn_detection.prefix_padding_ms,
                "silence_duration_ms": self.turn_detection.silence_duration_ms,
            }
        return {
            "id": self.id,
            "object": "realtime.transcription_session",
            "type": "transcription",
            "audio": {
                "input": {
                    "format": fmt,
                    "transcription": {
                        "model": self.model,
                        "language": self.language,
                        "prompt": self.prompt,
                    },
                    "turn_detection": turn,
                    # Accepted in updates, never applied: the session reports what it does.
                    "noise_reduction": None,
                }
            },
        }


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        int: "an integer",
        float: "a number",
    }.get(type(value), type(value).__name__)


def _invalid_type(param: str, expected: str, value: object) -> ProtocolError:
    return ProtocolError(
        f"'{param}' must be {expected}, not {_type_name(value)}", code="invalid_type", param=param
    )


def _object(value: object, param: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _invalid_type(param, "an object", value)
    return value


def _optional_str(value: object, param: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise _invalid_type(param, "a string or null", value)
    return value


def _int(value: object, param: str, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid_type(param, f"an integer ({what})", value)
    if not low <= value <= high:
        raise ProtocolError(f"'{param}' must be {what}; got {value}", param=param)
    return value


def _rate(value: object, param: str) -> int:
    return _int(
        value,
        param,
        MIN_RATE,
        MAX_RATE,
        f"a sample rate from {MIN_RATE} to {MAX_RATE} Hz, e.g. 24000",
    )


def _format(value: object, param: str) -> AudioFormat:
    obj = _object(value, param)
    kind = obj.get("type", PCM16)
    if not isinstance(kind, str):
        raise _invalid_type(f"{param}.type", "a string", kind)
    if kind not in SUPPORTED_FORMATS:
        raise ProtocolError(
            f"'{param}.type' must be one of {', '.join(SUPPORTED_FORMATS)}; got '{kind}'",
            param=f"{param}.type",
        )
    rate = obj.get("rate")
    if kind == PCM16:
        return AudioFormat(PCM16, OPENAI_PCM_RATE if rate is None else _rate(rate, f"{param}.rate"))
    if rate is not None and _rate(rate, f"{param}.rate") != G711_RATE:
        raise ProtocolError(
            f"'{param}.rate' must be {G711_RATE} for {kind} (G.711 is 8 kHz)", param=f"{param}.rate"
        )
    return AudioFormat(kind, G711_RATE)


def _beta_format(value: object, param: str) -> AudioFormat:
    if not isinstance(value, str):
        raise _invalid_type(param, "a string", value)
    if value not in _BETA_FORMATS:
        raise ProtocolError(
            f"'{param}' must be one of {', '.join(_BETA_FORMATS)}; got '{value}'", param=param
        )
    return _BETA_FORMATS[value]


def _language(value: object, param: str) -> str | None:
    value = _optional_str(value, param)
    if not value:
        return None
    if not _LANGUAGE.fullmatch(value):
        raise ProtocolError(
            f"'{param}' must be a language code such as 'en' or 'de', or null", param=param
        )
    return value


def _turn_detection(value: object, param: str) -> TurnDetectorSettings | None:
    """``null`` turns detection off; an object replaces the settings (omitted fields: defaults)."""
    if value is None:
        return None
    obj = _object(value, param)
    kind = obj.get("type", "server_vad")
    if kind != "server_vad":
        raise ProtocolError(
            f"'{param}.type' must be 'server_vad' (or set turn_detection to null); got {kind!r}",
            param=f"{param}.type",
        )
    default = TurnDetectorSettings()
    threshold = obj.get("threshold", default.threshold)
    if threshold is None:
        threshold = default.threshold
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise _invalid_type(f"{param}.threshold", "a number from 0 to 1", threshold)
    if not (math.isfinite(threshold) and 0.0 <= threshold <= 1.0):
        raise ProtocolError(
            f"'{param}.threshold' must be from 0 to 1; got {threshold}", param=f"{param}.threshold"
        )
    padding = obj.get("prefix_padding_ms", default.prefix_padding_ms)
    silence = obj.get("silence_duration_ms", default.silence_duration_ms)
    return TurnDetectorSettings(
        threshold=float(threshold),
        prefix_padding_ms=_int(
            default.prefix_padding_ms if padding is None else padding,
            f"{param}.prefix_padding_ms",
            0,
            _MAX_PADDING_MS,
            f"from 0 to {_MAX_PADDING_MS} ms",
        ),
        silence_duration_ms=_int(
            default.silence_duration_ms if silence is None else silence,
            f"{param}.silence_duration_ms",
            0,
            _MAX_SILENCE_MS,
            f"from 0 to {_MAX_SILENCE_MS} ms",
        ),
    )


def _noise_reduction(value: object, param: str) -> None:
    """Validated, then ignored: noise reduction is not applied (the session reports null)."""
    if value is None:
        return
    kind = _object(value, param).get("type")
    if kind not in _NOISE_REDUCTION_TYPES:
        raise ProtocolError(
            f"'{param}.type' must be one of {', '.join(_NOISE_REDUCTION_TYPES)}",
            param=f"{param}.type",
        )


def _transcription(value: object, param: str, fields: dict[str, Any]) -> None:
    """Present keys update; ``null`` resets language and prompt."""
    if value is None:
        fields.update(language=None, prompt=None)
        return
    obj = _object(value, param)
    if "model" in obj:
        fields["model"] = _optional_str(obj["model"], f"{param}.model")
    if "language" in obj:
        fields["language"] = _language(obj["language"], f"{param}.language")
    if "prompt" in obj:
        fields["prompt"] = _optional_str(obj["prompt"], f"{param}.prompt") or None


def parse_session_patch(value: object, param: str = "session") -> SessionPatch:
    """Read a ``session`` object of either update shape; unknown keys are ignored.

    Beta keys are read first, then the GA ``audio.input`` ones, so the GA shape wins when a
    client sends both.
    """
    obj = _object(value, param)
    fields: dict[str, Any] = {}
    kind = obj.get("type")
    if kind is not None and kind != "transcription":
        raise ProtocolError(
            f"'{param}.type' must be 'transcription': this server only transcribes; got {kind!r}",
            param=f"{param}.type",
        )
    if "model" in obj:
        fields["model"] = _optional_str(obj["model"], f"{param}.model")
    # Beta (transcription_session.update) shape.
    if "input_audio_format" in obj:
        fields["format"] = _beta_format(obj["input_audio_format"], f"{param}.input_audio_format")
    if "input_audio_transcription" in obj:
        _transcription(
            obj["input_audio_transcription"], f"{param}.input_audio_transcription", fields
        )
    if "turn_detection" in obj:
        fields["turn_detection"] = _turn_detection(obj["turn_detection"], f"{param}.turn_detection")
    if "input_audio_noise_reduction" in obj:
        _noise_reduction(obj["input_audio_noise_reduction"], f"{param}.input_audio_noise_reduction")
    # GA shape.
    audio = obj.get("audio")
    if audio is not None:
        audio_in = _object(audio, f"{param}.audio").get("input")
        if audio_in is not None:
            where = f"{param}.audio.input"
            audio_in = _object(audio_in, where)
            if audio_in.get("format") is not None:
                fields["format"] = _format(audio_in["format"], f"{where}.format")
            if "transcription" in audio_in:
                _transcription(audio_in["transcription"], f"{where}.transcription", fields)
            if "turn_detection" in audio_in:
                fields["turn_detection"] = _turn_detection(
                    audio_in["turn_detection"], f"{where}.turn_detection"
                )
            if "noise_reduction" in audio_in:
                _noise_reduction(audio_in["noise_reduction"], f"{where}.noise_reduction")
    return SessionPatch(**fields)

"""Reading and rendering ``turn_detection``: OpenAI's ``server_vad`` and ``semantic_vad``.

:func:`parse_turn_detection` turns the client's object into the VAD settings the speech gate
runs (:class:`~desktop_rt.engine.audio.vad.TurnDetectorSettings`) and the :class:`TurnOptions`
around them; :func:`turn_detection_wire` renders both back for the ``session`` object. There is
no semantic turn model here: ``semantic_vad`` is the same VAD with its ``eagerness`` mapped to
the silence that ends a turn (:data:`EAGERNESS_SILENCE_MS`, documented in docs/protocol.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from desktop_rt.engine.audio.vad import TurnDetectorSettings
from desktop_rt.engine.protocol.fields import (
    ProtocolError,
    bounded_int,
    invalid_type,
    json_object,
    shown,
)

__all__ = [
    "SERVER_VAD",
    "SEMANTIC_VAD",
    "EAGERNESS_SILENCE_MS",
    "MAX_IDLE_TIMEOUT_MS",
    "TurnOptions",
    "parse_turn_detection",
    "turn_detection_wire",
]

SERVER_VAD = "server_vad"
SEMANTIC_VAD = "semantic_vad"
EAGERNESS_SILENCE_MS = {"low": 2000, "medium": 1000, "auto": 1000, "high": 500}
"""semantic_vad's ``eagerness`` as the silence (ms) that ends a turn; ``auto`` is ``medium``."""
MIN_IDLE_TIMEOUT_MS = 100
MAX_IDLE_TIMEOUT_MS = 3_600_000
_MAX_PADDING_MS = 10_000
_MAX_SILENCE_MS = 60_000
_SERVER_VAD_ONLY = ("threshold", "prefix_padding_ms", "silence_duration_ms", "idle_timeout_ms")
_NO_EFFECT = ("create_response", "interrupt_response")  # about responses: none in transcription


@dataclass(frozen=True)
class TurnOptions:
    """What a ``turn_detection`` object asks besides the VAD settings.

    ``type`` is ``server_vad`` or ``semantic_vad``; ``eagerness`` is semantic_vad's (already
    mapped onto the settings' silence); ``idle_timeout_ms`` (server_vad) is the silence, in
    audio received, after which the session sends ``input_audio_buffer.timeout_triggered``.
    A plain ``server_vad`` object has no options (None), so a patch built in code from
    settings alone equals the one parsed from the wire.
    """

    type: str = SERVER_VAD
    eagerness: str | None = None
    idle_timeout_ms: int | None = None


def _flag(obj: dict[str, Any], param: str) -> None:
    for key in _NO_EFFECT:
        value = obj.get(key)
        if value is not None and not isinstance(value, bool):
            raise invalid_type(f"{param}.{key}", "true, false or null", value)


def _threshold(obj: dict[str, Any], param: str, default: float) -> float:
    threshold = obj.get("threshold")
    if threshold is None:
        return default
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise invalid_type(f"{param}.threshold", "a number from 0 to 1", threshold)
    if not (math.isfinite(threshold) and 0.0 <= threshold <= 1.0):
        raise ProtocolError(
            f"'{param}.threshold' must be from 0 to 1; got {threshold}", param=f"{param}.threshold"
        )
    return float(threshold)


def _ms(obj: dict[str, Any], key: str, param: str, default: int, high: int) -> int:
    value = obj.get(key)
    if value is None:
        return default
    return bounded_int(value, f"{param}.{key}", 0, high, f"from 0 to {high} ms")


def _server_vad(obj: dict[str, Any], param: str) -> tuple[TurnDetectorSettings, TurnOptions | None]:
    default = TurnDetectorSettings()
    settings = TurnDetectorSettings(
        threshold=_threshold(obj, param, default.threshold),
        prefix_padding_ms=_ms(
            obj, "prefix_padding_ms", param, default.prefix_padding_ms, _MAX_PADDING_MS
        ),
        silence_duration_ms=_ms(
            obj, "silence_duration_ms", param, default.silence_duration_ms, _MAX_SILENCE_MS
        ),
    )
    idle = obj.get("idle_timeout_ms")
    if idle is None:
        return settings, None
    idle_ms = bounded_int(
        idle,
        f"{param}.idle_timeout_ms",
        MIN_IDLE_TIMEOUT_MS,
        MAX_IDLE_TIMEOUT_MS,
        f"from {MIN_IDLE_TIMEOUT_MS} to {MAX_IDLE_TIMEOUT_MS} ms, or null",
    )
    return settings, TurnOptions(idle_timeout_ms=idle_ms)


def _semantic_vad(obj: dict[str, Any], param: str) -> tuple[TurnDetectorSettings, TurnOptions]:
    for key in _SERVER_VAD_ONLY:
        if obj.get(key) is not None:
            raise ProtocolError(
                f"'{param}.{key}' is a server_vad setting; semantic_vad takes only 'eagerness' "
                f"({', '.join(EAGERNESS_SILENCE_MS)})",
                param=f"{param}.{key}",
            )
    eagerness = obj.get("eagerness")
    if eagerness is None:
        eagerness = "auto"
    if not isinstance(eagerness, str):
        raise invalid_type(f"{param}.eagerness", "a string", eagerness)
    if eagerness not in EAGERNESS_SILENCE_MS:
        raise ProtocolError(
            f"'{param}.eagerness' must be one of {', '.join(EAGERNESS_SILENCE_MS)}; "
            f"got {shown(eagerness)}",
            param=f"{param}.eagerness",
        )
    settings = TurnDetectorSettings(silence_duration_ms=EAGERNESS_SILENCE_MS[eagerness])
    return settings, TurnOptions(SEMANTIC_VAD, eagerness)


def parse_turn_detection(
    value: object, param: str
) -> tuple[TurnDetectorSettings | None, TurnOptions | None]:
    """``null`` turns detection off; an object replaces the settings (omitted fields: defaults)."""
    if value is None:
        return None, None
    obj = json_object(value, param)
    _flag(obj, param)
    kind = obj.get("type", SERVER_VAD)
    if kind == SEMANTIC_VAD:
        return _semantic_vad(obj, param)
    if kind != SERVER_VAD:
        raise ProtocolError(
            f"'{param}.type' must be '{SERVER_VAD}' or '{SEMANTIC_VAD}' (or set turn_detection "
            f"to null); got {shown(kind)}",
            param=f"{param}.type",
        )
    return _server_vad(obj, param)


def turn_detection_wire(
    settings: TurnDetectorSettings | None, options: TurnOptions | None
) -> dict[str, Any] | None:
    """The ``turn_detection`` object of the session: what was asked, and the VAD it runs."""
    if settings is None:
        return None
    options = options or TurnOptions()
    wire: dict[str, Any] = {"type": options.type}
    if options.type == SEMANTIC_VAD:
        wire["eagerness"] = options.eagerness
    wire.update(
        threshold=settings.threshold,
        prefix_padding_ms=settings.prefix_padding_ms,
        silence_duration_ms=settings.silence_duration_ms,
    )
    if options.idle_timeout_ms is not None:
        wire["idle_timeout_ms"] = options.idle_timeout_ms
    return wire

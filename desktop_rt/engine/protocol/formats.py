"""The input audio formats a session takes, and reading them from ``session.update``.

:data:`DEFAULT_FORMAT` is OpenAI's: PCM16 at 24 kHz, what a session decodes until the client
names another. :func:`parse_format` reads the GA ``audio.input.format`` object and
:func:`parse_beta_format` the beta ``input_audio_format`` name; both raise
:class:`~desktop_rt.engine.protocol.fields.ProtocolError` naming the field.
"""

from __future__ import annotations

from desktop_rt.engine.audio.codecs import PCM16, PCMA, PCMU, SUPPORTED_FORMATS, AudioFormat
from desktop_rt.engine.protocol.fields import (
    ProtocolError,
    bounded_int,
    invalid_type,
    json_object,
    shown,
)

__all__ = [
    "MIN_RATE",
    "MAX_RATE",
    "OPENAI_PCM_RATE",
    "G711_RATE",
    "DEFAULT_FORMAT",
    "describe_format",
    "parse_format",
    "parse_beta_format",
]

MIN_RATE = 8_000
MAX_RATE = 48_000
OPENAI_PCM_RATE = 24_000
"""The rate OpenAI's ``audio/pcm`` (and beta ``pcm16``) means when a client names no rate."""
G711_RATE = 8_000
DEFAULT_FORMAT = AudioFormat(PCM16, OPENAI_PCM_RATE)
"""A session's input format until a ``session.update`` names one (OpenAI's default)."""

_BETA_FORMATS = {
    "pcm16": AudioFormat(PCM16, OPENAI_PCM_RATE),
    "g711_ulaw": AudioFormat(PCMU, G711_RATE),
    "g711_alaw": AudioFormat(PCMA, G711_RATE),
}


def describe_format(fmt: AudioFormat) -> str:
    """What a client must send, in words: "PCM16 little-endian mono at 24000 Hz"."""
    kind = {PCM16: "PCM16 little-endian", PCMU: "G.711 mu-law", PCMA: "G.711 A-law"}.get(
        fmt.type, fmt.type
    )
    return f"{kind} mono at {fmt.rate} Hz"


def _rate(value: object, param: str) -> int:
    return bounded_int(
        value,
        param,
        MIN_RATE,
        MAX_RATE,
        f"a sample rate from {MIN_RATE} to {MAX_RATE} Hz, e.g. 24000",
    )


def parse_format(value: object, param: str) -> AudioFormat:
    """The GA ``{"type", "rate"}`` object; ``audio/pcm`` without a rate is 24 kHz."""
    obj = json_object(value, param)
    kind = obj.get("type", PCM16)
    if not isinstance(kind, str):
        raise invalid_type(f"{param}.type", "a string", kind)
    if kind not in SUPPORTED_FORMATS:
        raise ProtocolError(
            f"'{param}.type' must be one of {', '.join(SUPPORTED_FORMATS)}; got {shown(kind)}",
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


def parse_beta_format(value: object, param: str) -> AudioFormat:
    """The beta name: ``pcm16`` (24 kHz), ``g711_ulaw`` or ``g711_alaw`` (8 kHz)."""
    if not isinstance(value, str):
        raise invalid_type(param, "a string", value)
    if value not in _BETA_FORMATS:
        raise ProtocolError(
            f"'{param}' must be one of {', '.join(_BETA_FORMATS)}; got {shown(value)}",
            param=param,
        )
    return _BETA_FORMATS[value]

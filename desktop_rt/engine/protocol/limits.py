"""How much audio one session takes: its limits, and the checks an append must pass.

:func:`check_append` judges one append by its wire length before it is decoded, and raises
:class:`ProtocolError` (an ``error`` event; the session goes on) for audio that is too large,
malformed or past the backlog. :func:`backlog_room` is the exact bound, applied by the session
to the decoded audio it hands to the worker. Invariant: the backlog (audio handed to the
worker, not yet consumed) never exceeds ``max_backlog_seconds``.
"""

from __future__ import annotations

from dataclasses import dataclass

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.codecs import PCM16, AudioFormat
from desktop_rt.engine.protocol.events import DEFAULT_MAX_APPEND_BYTES
from desktop_rt.engine.protocol.session_config import ProtocolError, describe_format

__all__ = ["SessionLimits", "backlog_room", "check_append"]


@dataclass(frozen=True)
class SessionLimits:
    """``max_backlog_seconds``: audio handed to the worker and not yet consumed;
    ``max_append_bytes``: base64 characters in one append."""

    max_backlog_seconds: float = 30.0
    max_append_bytes: int = DEFAULT_MAX_APPEND_BYTES


def check_append(raw: bytes, fmt: AudioFormat, limits: SessionLimits, backlog: float) -> None:
    """Raise :class:`ProtocolError` unless ``raw`` (decoded base64, in ``fmt``) may be taken."""
    max_raw = limits.max_append_bytes // 4 * 3
    if len(raw) > max_raw:
        raise ProtocolError(
            f"input_audio_buffer.append: {len(raw)} bytes of audio, more than the {max_raw} allowed in one "
            "append; send smaller chunks",
            code="audio_too_large",
            param="audio",
        )
    if fmt.type == PCM16 and len(raw) % 2:
        expected = f"'audio' must be a base64 string of {describe_format(fmt)}"
        raise ProtocolError(
            f"input_audio_buffer.append: {expected}; got {len(raw)} bytes, an odd count (2 bytes per sample)",
            code="invalid_audio",
            param="audio",
        )
    seconds = len(raw) / fmt.bytes_per_sample / fmt.rate
    limit = limits.max_backlog_seconds
    if seconds > limit:
        raise ProtocolError(
            f"input_audio_buffer.append: {seconds:.1f} s of audio in one append, more than the {limit:g} s "
            "allowed; send smaller chunks",
            code="audio_too_large",
            param="audio",
        )
    if backlog + seconds > limit:
        raise ProtocolError(
            f"input_audio_buffer.append: audio dropped: the client sends audio faster than the model "
            f"transcribes it ({backlog:.1f} s are waiting, at most {limit:g} s may). Send audio no "
            "faster than real time, or wait for transcripts before sending more",
            code="audio_backlog_full",
            param="audio",
        )


def backlog_room(limits: SessionLimits, backlog: float) -> int:
    """How many 16 kHz samples may still be handed to the worker."""
    return max(0, int((limits.max_backlog_seconds - backlog) * SAMPLE_RATE + 1e-6))

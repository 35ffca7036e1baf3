"""How much audio one session takes: its limits, and the checks an append must pass.

Audio a session accepted goes to the worker as its backlog leaves room; what does not fit yet
waits in the session's input queue, within ``max_queued_bytes`` (:mod:`.input_queue`). The
checks raise :class:`ProtocolError` (an ``error`` event; the session goes on):
:func:`check_append_size` (``audio_too_large``), :func:`check_queue_room` when the queue is full
(``audio_backlog_full``), :func:`check_pcm_length` for an odd PCM16 byte count, and :func:`check_append` for a session without a queue (the
desktop window's), which drops what does not fit the backlog at once. :func:`backlog_room` is
the exact bound on what is handed to the worker, which :class:`Backlog` keeps. Invariant: the backlog (audio handed to the
worker, not yet consumed) never exceeds ``max_backlog_seconds``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.audio.codecs import PCM16, AudioFormat
from desktop_rt.engine.protocol.events import DEFAULT_MAX_APPEND_BYTES, ErrorEvent
from desktop_rt.engine.protocol.formats import describe_format
from desktop_rt.engine.protocol.session_config import ProtocolError

__all__ = [
    "SessionLimits",
    "Backlog",
    "backlog_room",
    "check_append",
    "check_append_size",
    "check_pcm_length",
    "check_queue_room",
    "handing_margin",
    "wire_bytes_for",
]

_MARGIN_SECONDS = 0.25  # room kept free for the resampler's tail when an item is committed


@dataclass(frozen=True)
class SessionLimits:
    """``max_backlog_seconds``: audio handed to the worker and not yet consumed;
    ``max_append_bytes``: base64 characters in one append; ``max_queued_bytes``: wire audio
    accepted but not yet handed to the worker (0: no queue; an append that does not fit the
    backlog is dropped, as a live microphone cannot wait)."""

    max_backlog_seconds: float = 30.0
    max_append_bytes: int = DEFAULT_MAX_APPEND_BYTES
    max_queued_bytes: int = 32 * 1024 * 1024

    @property
    def queues(self) -> bool:
        return self.max_queued_bytes > 0


def check_pcm_length(raw: bytes, fmt: AudioFormat) -> None:
    """Raise ``invalid_audio`` for PCM16 audio of an odd number of bytes."""
    if fmt.type == PCM16 and len(raw) % 2:
        expected = f"'audio' must be a base64 string of {describe_format(fmt)}"
        raise ProtocolError(
            f"input_audio_buffer.append: {expected}; got {len(raw)} bytes, an odd count (2 bytes per sample)",
            code="invalid_audio",
            param="audio",
        )


def check_queue_room(size: int, queued: int, limits: SessionLimits) -> None:
    """Raise ``audio_backlog_full`` unless ``size`` more bytes fit in the input queue."""
    if queued + size > limits.max_queued_bytes:
        raise ProtocolError(
            f"input_audio_buffer.append: audio dropped: the client sends audio faster than the model "
            f"transcribes it ({queued} bytes are waiting, at most {limits.max_queued_bytes} may). Wait "
            "for transcripts before sending more",
            code="audio_backlog_full",
            param="audio",
        )


def check_append_size(raw: bytes, limits: SessionLimits) -> None:
    """Raise ``audio_too_large`` for more audio than ``max_append_bytes`` of base64 hold."""
    max_raw = limits.max_append_bytes // 4 * 3
    if len(raw) > max_raw:
        raise ProtocolError(
            f"input_audio_buffer.append: {len(raw)} bytes of audio, more than the {max_raw} allowed in one "
            "append; send smaller chunks",
            code="audio_too_large",
            param="audio",
        )


def check_append(raw: bytes, fmt: AudioFormat, limits: SessionLimits, backlog: float) -> None:
    """For a session without a queue: raise :class:`ProtocolError` unless ``raw`` (decoded
    base64, in ``fmt``) fits the backlog now."""
    check_append_size(raw, limits)
    check_pcm_length(raw, fmt)
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


def handing_margin(limits: SessionLimits, padding_ms: int) -> int:
    """16 kHz samples of backlog kept free when queued audio is handed over: the resampler's
    tail and the server VAD's prefix padding come on top of a slice (at most half the room)."""
    margin = round((_MARGIN_SECONDS + padding_ms / 1000) * SAMPLE_RATE)
    return min(margin, int(limits.max_backlog_seconds * SAMPLE_RATE) // 2)


def wire_bytes_for(samples: int, fmt: AudioFormat) -> int:
    """The most wire bytes of ``fmt`` that decode to at most ``samples`` 16 kHz samples."""
    return max(0, samples * fmt.rate // SAMPLE_RATE) * fmt.bytes_per_sample


class Backlog:
    """The audio handed to one session's worker stream and not yet consumed, in seconds."""

    def __init__(self, limits: SessionLimits):
        self.limits = limits
        self.seconds = 0.0

    @property
    def room(self) -> int:
        return backlog_room(self.limits, self.seconds)

    def consumed(self, seconds: float) -> None:
        self.seconds = max(0.0, self.seconds - max(0.0, float(seconds)))

    def slice_bytes(self, fmt: AudioFormat, padding_ms: int) -> int:
        """How many queued wire bytes may be decoded and handed over now (0: wait)."""
        return wire_bytes_for(self.room - handing_margin(self.limits, padding_ms), fmt)

    def fit(self, samples: np.ndarray) -> tuple[np.ndarray, ErrorEvent | None]:
        """``samples`` cut to the room left, counted as handed; an error event if cut.

        Queued audio is handed in slices that leave a margin, but the resampler releases output
        in blocks and server_vad releases held padding at a turn's start, so the exact bound is
        enforced here, on what really goes to the worker.
        """
        room, error = self.room, None
        if len(samples) > room:
            error = ErrorEvent(
                f"audio dropped: {(len(samples) - room) / SAMPLE_RATE:.3f} s did not fit in the "
                f"{self.limits.max_backlog_seconds:g} s backlog; send audio no faster than real time",
                "audio_backlog_full",
                "audio",
            )
            samples = samples[:room]
        self.seconds += len(samples) / SAMPLE_RATE
        return samples, error

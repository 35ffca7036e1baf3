"""Audio in every shape desktop-rt meets it, turned into float32 mono 16 kHz.

- wire formats of the realtime protocol: PCM16 little-endian, G.711 mu-law and A-law;
- a streaming resampler that keeps its state between chunks (no clicks at chunk edges);
- audio files of any rate and channel count (wav/flac/mp3/... through PyAV);
- levels (dBFS) for meters.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.errors import AudioDecodeError

__all__ = [
    "SAMPLE_RATE",
    "AudioFormat",
    "PCM16",
    "PCMU",
    "PCMA",
    "SUPPORTED_FORMATS",
    "decode_base64_audio",
    "pcm16_to_float",
    "float_to_pcm16",
    "StreamResampler",
    "WireDecoder",
    "level_dbfs",
]

PCM16 = "audio/pcm"
PCMU = "audio/pcmu"
PCMA = "audio/pcma"
SUPPORTED_FORMATS = (PCM16, PCMU, PCMA)


@dataclass(frozen=True)
class AudioFormat:
    """An input format as the realtime session object states it."""

    type: str = PCM16
    rate: int = SAMPLE_RATE

    @property
    def bytes_per_sample(self) -> int:
        return 2 if self.type == PCM16 else 1


def decode_base64_audio(data: str) -> bytes:
    """Strictly decode base64 (``validate=True``); raise :class:`AudioDecodeError` otherwise."""
    if not isinstance(data, str):
        raise AudioDecodeError("audio must be a base64 string")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise AudioDecodeError(f"audio is not valid base64: {exc}") from None


def pcm16_to_float(raw: bytes) -> np.ndarray:
    if len(raw) % 2:
        raise AudioDecodeError(
            f"PCM16 audio must have an even number of bytes (2 per sample); got {len(raw)}"
        )
    return np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0


def float_to_pcm16(samples: np.ndarray) -> bytes:
    clipped = np.clip(np.asarray(samples, dtype=np.float32), -1.0, 32767 / 32768)
    return (clipped * 32768.0).astype("<i2").tobytes()


def _ulaw_table() -> np.ndarray:
    codes = np.arange(256, dtype=np.int32)
    u = ~codes & 0xFF
    sign = u & 0x80
    exponent = (u >> 4) & 0x07
    mantissa = u & 0x0F
    magnitude = (((mantissa << 3) + 0x84) << exponent) - 0x84
    return np.where(sign != 0, -magnitude, magnitude).astype(np.float32) / 32768.0


def _alaw_table() -> np.ndarray:
    codes = np.arange(256, dtype=np.int32) ^ 0x55
    sign = codes & 0x80
    exponent = (codes >> 4) & 0x07
    mantissa = codes & 0x0F
    magnitude = np.where(
        exponent == 0, (mantissa << 4) + 8, ((mantissa << 4) + 0x108) << np.maximum(exponent - 1, 0)
    )
    return np.where(sign != 0, magnitude, -magnitude).astype(np.float32) / 32768.0


_ULAW = _ulaw_table()
_ALAW = _alaw_table()


class StreamResampler:
    """Resamples a chunked stream to 16 kHz, carrying filter state across chunks (soxr)."""

    def __init__(self, in_rate: int, out_rate: int = SAMPLE_RATE):
        self.in_rate = int(in_rate)
        self.out_rate = int(out_rate)
        self._stream = None
        if self.in_rate != self.out_rate:
            import soxr

            self._stream = soxr.ResampleStream(
                self.in_rate, self.out_rate, 1, dtype="float32", quality="HQ"
            )

    def process(self, samples: np.ndarray, last: bool = False) -> np.ndarray:
        samples = np.asarray(samples, dtype=np.float32)
        if self._stream is None:
            return samples
        out: np.ndarray = self._stream.resample_chunk(samples, last=last)
        return out


class WireDecoder:
    """Decodes appended wire audio of one format into float32 16 kHz, chunk after chunk."""

    def __init__(self, fmt: AudioFormat):
        if fmt.type not in SUPPORTED_FORMATS:
            raise AudioDecodeError(
                f"unsupported audio format '{fmt.type}'; use one of {', '.join(SUPPORTED_FORMATS)}"
            )
        self.format = fmt
        self._resampler = StreamResampler(fmt.rate)

    def decode(self, raw: bytes) -> np.ndarray:
        if self.format.type == PCM16:
            samples = pcm16_to_float(raw)
        else:
            table = _ULAW if self.format.type == PCMU else _ALAW
            samples = table[np.frombuffer(raw, dtype=np.uint8)]
        return self._resampler.process(samples)

    def flush(self) -> np.ndarray:
        return self._resampler.process(np.zeros(0, dtype=np.float32), last=True)


def level_dbfs(samples: np.ndarray) -> float:
    """RMS level in dBFS (-inf for digital silence is clamped to -120)."""
    if len(samples) == 0:
        return -120.0
    rms = float(np.sqrt(np.mean(np.square(samples, dtype=np.float64))))
    return max(-120.0, 20.0 * np.log10(rms)) if rms > 0 else -120.0

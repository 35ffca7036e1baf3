"""Healthy and damaged Ogg (Vorbis, Opus), FLAC and MP3 files, built by the test with soundfile
and PyAV: ``write_encoded`` writes one, ``cut_at`` cuts it short, ``overwrite_inside`` writes
random bytes into its middle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import soundfile as sf

from tests.support.bad_audio import write_mp3

KINDS = ("vorbis", "opus", "flac", "mp3")
_SUFFIX = {"vorbis": ".ogg", "opus": ".opus", "flac": ".flac", "mp3": ".mp3"}
_SOUNDFILE = {"vorbis": ("OGG", "VORBIS"), "opus": ("OGG", "OPUS"), "flac": ("FLAC", "PCM_16")}


def write_encoded(folder: Path, kind: str, audio: np.ndarray, rate: int = 16000) -> Path:
    """``audio`` (float32 mono) encoded as ``kind`` (one of :data:`KINDS`) in ``folder``."""
    path = folder / f"whole{_SUFFIX[kind]}"
    if kind == "mp3":
        write_mp3(path, audio, rate)
    else:
        container, subtype = _SOUNDFILE[kind]
        sf.write(path, audio, rate, format=container, subtype=subtype)
    return path


def cut_at(whole: Path, fraction: float) -> Path:
    """A copy of ``whole`` holding only its first ``fraction`` of bytes."""
    data = whole.read_bytes()
    cut = whole.with_name(f"cut{whole.suffix}")
    cut.write_bytes(data[: int(len(data) * fraction)])
    return cut


def overwrite_inside(whole: Path, size: int = 4096, at: float = 0.5, seed: int = 0) -> Path:
    """A copy of ``whole`` with ``size`` random bytes written over it at ``at`` of its length
    (same size: a damaged sector, not a cut)."""
    data = bytearray(whole.read_bytes())
    start = int(len(data) * at)
    garbage = np.random.default_rng(seed).integers(0, 256, size, dtype=np.uint8).tobytes()
    data[start : start + size] = garbage
    damaged = whole.with_name(f"damaged{whole.suffix}")
    damaged.write_bytes(bytes(data))
    return damaged

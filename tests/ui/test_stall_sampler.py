"""The stall sampler (desktop_rt/ui/stall_sampler.py) names what held the UI thread."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import json
import threading
import time

from PySide6.QtCore import QTimer

from desktop_rt.ui.stall_sampler import STALL_LOG_ENV, StallSampler, sampler_from_env

BLOCK_S = 0.3  # far over the 50 ms threshold, so a loaded machine cannot hide it


def _block_the_ui_thread() -> None:
    time.sleep(BLOCK_S)  # the stall under test: the UI thread blocked, not a wait


def _hold_the_gil(held: threading.Event, release: threading.Event) -> None:
    sum(range(30_000_000))  # one C call: the GIL is not released until it returns
    held.set()
    release.wait(60)  # alive until the stall is attributed: its CPU time is read then


def _stalls_after(qtbot, sampler: StallSampler, block) -> list:
    sampler.start()
    done = []
    qtbot.waitUntil(lambda: sampler.beats > 5, timeout=10_000)
    QTimer.singleShot(0, lambda: (block(), done.append(True)))
    qtbot.waitUntil(lambda: bool(done), timeout=30_000)
    qtbot.waitUntil(lambda: sampler.beats > 20, timeout=10_000)  # a few beats after
    return sampler.stop()


def test_a_slot_that_blocks_is_named(qtbot):
    sampler = StallSampler()
    stalls = _stalls_after(qtbot, sampler, _block_the_ui_thread)
    causes = [s.cause for s in stalls]
    assert any("_block_the_ui_thread" in c and c.startswith("ui: ") for c in causes), causes


def test_a_thread_holding_the_gil_is_named(qtbot):
    sampler = StallSampler()

    sampler.start()
    qtbot.waitUntil(lambda: sampler.beats > 5, timeout=10_000)
    held, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=_hold_the_gil, args=(held, release), name="gil-holder")
    holder.start()
    qtbot.waitUntil(held.is_set, timeout=60_000)
    beats = sampler.beats
    qtbot.waitUntil(lambda: sampler.beats > beats + 20, timeout=10_000)
    stalls = sampler.stop()
    release.set()
    assert stalls, "a C call holding the GIL stalls the heartbeat"
    longest = max(stalls, key=lambda s: s.seconds)
    assert "gil-holder" in longest.busy_threads
    assert longest.cause.startswith("gil: gil-holder"), longest


def test_a_slow_garbage_collection_is_named(qtbot):
    keep = [[] for _ in range(2_000_000)]  # a big heap: a full collection walks all of it
    for item in keep:
        item.append(item)
    sampler = StallSampler()
    stalls = _stalls_after(qtbot, sampler, lambda: gc.collect(2))
    del keep
    causes = [s.cause for s in stalls]
    assert "gc: generation 2 in MainThread" in causes, causes


def test_the_app_switch_writes_json_lines(qtbot, tmp_path, monkeypatch):
    target = tmp_path / "stalls.jsonl"
    monkeypatch.setenv(STALL_LOG_ENV, str(target))
    sampler = sampler_from_env()
    assert sampler is not None
    done = []
    qtbot.waitUntil(lambda: sampler.beats > 5, timeout=10_000)
    QTimer.singleShot(0, lambda: (_block_the_ui_thread(), done.append(True)))
    qtbot.waitUntil(lambda: bool(done) and sampler.beats > 20, timeout=30_000)
    sampler.stop()
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert any("_block_the_ui_thread" in row["cause"] for row in rows), rows


def test_unset_switch_means_no_sampler(monkeypatch):
    monkeypatch.delenv(STALL_LOG_ENV, raising=False)
    assert sampler_from_env() is None


def _sleep_holding_the_gil(done: threading.Event) -> None:
    libc = ctypes.PyDLL(ctypes.util.find_library("c"))  # PyDLL: the GIL stays held in the call
    libc.usleep(int(BLOCK_S * 1e6))  # the stall under test, with the GIL held
    done.set()


def test_a_gil_held_by_a_thread_that_does_not_run_is_told_from_an_idle_loop(qtbot):
    sampler = StallSampler()
    sampler.start()
    qtbot.waitUntil(lambda: sampler.beats > 5, timeout=10_000)
    done = threading.Event()
    holder = threading.Thread(target=_sleep_holding_the_gil, args=(done,), name="gil-sleeper")
    holder.start()
    qtbot.waitUntil(done.is_set, timeout=30_000)
    holder.join(10)
    beats = sampler.beats
    qtbot.waitUntil(lambda: sampler.beats > beats + 20, timeout=10_000)
    stalls = sampler.stop()
    longest = max(stalls, key=lambda s: s.seconds)
    assert longest.cause.startswith("gil: "), longest
    assert longest.gil_wait_ms >= 100, longest  # the watchdog waited for the GIL too

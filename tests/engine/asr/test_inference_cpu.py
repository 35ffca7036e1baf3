"""inference_cpu: the CPU a pass takes on the model's own threads, not only the caller's."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

import numpy as np

from desktop_rt.core_types import SAMPLE_RATE
from desktop_rt.engine.asr import inference_cpu as meter
from desktop_rt.engine.asr.inference_cpu import inference_cpu
from tests.support.clips import librivox_stream


def test_a_real_pass_is_measured_on_the_model_threads_not_the_waiting_caller(whisper_backend):
    """CTranslate2 runs the pass on threads of its own while the caller waits: the caller's
    thread CPU is a sliver of the pass, the meter sees the pass's work (at most the wall time
    of every thread the model has, and here one core's worth at least half the time)."""
    audio = librivox_stream()[0][: 6 * SAMPLE_RATE].astype(np.float32)
    whisper_backend.transcribe(audio, language="en")  # warm
    wall, cpu, own = 0.0, 0.0, 0.0
    for _ in range(2):
        start, before, mine = time.monotonic(), inference_cpu(), time.thread_time()
        whisper_backend.transcribe(audio, language="en")
        wall += time.monotonic() - start
        cpu += inference_cpu() - before
        own += time.thread_time() - mine
    assert cpu > 5 * own
    assert cpu > 0.0
    assert cpu <= wall * (threading.active_count() + 8) + 0.01


_BESIDE = """
import threading, time
from desktop_rt.engine.asr.inference_cpu import inference_cpu
spent = []
def work():
    start = time.thread_time()
    while time.thread_time() - start < 0.3:
        sum(range(10_000))
    spent.append(time.thread_time() - start)
other = threading.Thread(target=work)
before, mine = inference_cpu(), time.thread_time()
other.start()
while other.is_alive():
    counted = inference_cpu() - before - (time.thread_time() - mine)
other.join()
print(counted, spent[0])
"""


def test_a_python_thread_busy_beside_it_is_not_counted():
    """In a process of its own (no model or VAD threads from other tests): a Python thread's
    CPU, read while it runs, is not the model's."""
    done = subprocess.run(
        [sys.executable, "-c", _BESIDE], capture_output=True, text=True, timeout=120, check=True
    )
    counted, spent = map(float, done.stdout.split())
    assert spent >= 0.3
    assert counted < spent / 3


def test_where_the_threads_cannot_be_read_it_measures_nothing(monkeypatch, tmp_path):
    monkeypatch.setattr(meter, "_TASKS", str(tmp_path / "no-such-dir"))
    assert inference_cpu() == 0.0

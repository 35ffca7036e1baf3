"""usable_cores follows the process's CPU affinity, and so do the thread counts built on it."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = """
import os
os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
from desktop_rt.machine import usable_cores
from desktop_rt.engine.asr.thread_choice import candidate_threads, fallback_threads
print(usable_cores(), candidate_threads(), fallback_threads())
"""


def test_a_process_pinned_to_one_core_counts_one_core_and_runs_one_thread():
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    ).stdout.split()
    assert out == ["1", "[1]", "1"], out


def test_unpinned_the_affinity_is_what_counts():
    from desktop_rt.machine import usable_cores

    assert usable_cores() == len(os.sched_getaffinity(0))

"""CPU seconds the inference worker spends, its model's own threads included: :func:`inference_cpu`.

The worker thread only waits while CTranslate2 (or llama.cpp) runs a pass on threads of the
model's own: its thread CPU time was about 3% of a pass's wall time. So a pass's CPU is read as
the calling thread's CPU seconds plus those of every thread of this process that Python did not
start (the model's threads; on Linux, ``/proc/self/task/*/schedstat``). Call it on the worker
thread before and after a pass and take the difference. Where ``/proc`` cannot be read it
returns ``0.0`` every time (no CPU measured: the governor counts wall time).

A Python thread leaves ``threading.enumerate()`` before its OS thread exits; read in that gap
it would look like a model thread with all its CPU. So every Python thread seen stays known
for as long as its task is listed.
"""

from __future__ import annotations

import os
import threading
import time

__all__ = ["inference_cpu"]

_TASKS = "/proc/self/task"
_python_tasks: frozenset[int] = frozenset()  # Python threads seen, while their tasks are listed


def inference_cpu() -> float:
    """CPU seconds of the calling thread and of the threads Python did not start (``0.0``
    where they cannot be read)."""
    try:
        tasks = os.listdir(_TASKS)
    except OSError:
        return 0.0
    global _python_tasks
    listed = {int(name) for name in tasks}
    started = {t.native_id for t in threading.enumerate() if t.native_id is not None}
    _python_tasks = frozenset((_python_tasks | started) & listed)
    known = _python_tasks
    total = time.thread_time()
    for task in listed:
        if task in known:
            continue
        try:
            with open(f"{_TASKS}/{task}/schedstat", encoding="ascii") as stat:
                total += int(stat.read().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            continue  # the thread ended meanwhile
    return total

"""bench/_app_sched.py: the app's threads counted by scheduling policy, as the x11 report shows."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import _app_sched as S  # noqa: E402


def test_a_thread_under_batch_is_counted_with_its_nice_value():
    counted: list[dict[str, int]] = []
    base = os.getpriority(os.PRIO_PROCESS, 0)

    def lowered() -> None:
        os.setpriority(os.PRIO_PROCESS, 0, base + 1)
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
        counted.append(S.thread_policies())

    thread = threading.Thread(target=lowered)
    thread.start()
    thread.join()
    assert counted[0].get(f"batch nice {min(base + 1, 19)}") == 1
    assert counted[0].get(f"other nice {base}", 0) >= 1  # this thread
    line = S.render_policies(counted[0])[0]
    assert f"batch nice {min(base + 1, 19)}: 1" in line

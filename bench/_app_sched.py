"""bench_app part ``x11``'s scheduling candidates: what a run was given and what its threads had.

``--engine-policy`` and ``--switch-interval-ms`` (docs/design/app.md, "The UI thread") are
named in the report by :func:`render_scheduling`; :func:`thread_policies`, read in the app's
process at the run's end, counts its threads by scheduling policy and nice value, so a report
shows the policy was applied (:func:`render_policies`).
"""

from __future__ import annotations

import collections
import os


def thread_policies() -> dict[str, int]:
    """How many of the app's threads run under each scheduling policy and nice value."""
    names = {os.SCHED_OTHER: "other", os.SCHED_BATCH: "batch", os.SCHED_IDLE: "idle"}
    seen: collections.Counter[str] = collections.Counter()
    for tid in os.listdir("/proc/self/task"):
        try:
            policy = os.sched_getscheduler(int(tid))
            nice = os.getpriority(os.PRIO_PROCESS, int(tid))
        except OSError:  # a thread that ended meanwhile
            continue
        seen[f"{names.get(policy, policy)} nice {nice}"] += 1
    return dict(seen)


def render_scheduling(x: dict) -> str:
    """The --engine-policy and --switch-interval-ms a run was given, if any."""
    policy, switch = x.get("engine_policy"), x.get("switch_interval_ms")
    return (
        f" The model's threads under SCHED_{policy.upper()} (--engine-policy)." if policy else ""
    ) + (f" sys.setswitchinterval {switch:g} ms (--switch-interval-ms)." if switch else "")


def render_policies(policies: dict | None) -> list[str]:
    """The app's threads by scheduling policy and nice value at the run's end."""
    if not policies:
        return []
    counts = ", ".join(f"{key}: {n}" for key, n in sorted(policies.items()))
    return [f"The app's threads by scheduling policy at the end: {counts}.", ""]

"""What this process may use of the machine: :func:`usable_cores`.

Thread counts and per-core limits follow the cores the process may run on (its CPU affinity:
``taskset``, a container's cpuset), not the cores the machine has; ``os.cpu_count()`` counts
the latter, and a process pinned to one core of two then ran two inference threads on it.
"""

from __future__ import annotations

import os

__all__ = ["usable_cores"]


def usable_cores() -> int:
    """Cores this process may run on (its affinity where the platform tells it), at least 1."""
    if hasattr(os, "sched_getaffinity"):  # Linux; macOS and Windows have no affinity call here
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1

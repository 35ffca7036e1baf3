"""A bounded wait for state that another thread or process owns and no signal announces.

``wait_until(condition, timeout)`` polls ``condition`` until it holds or ``timeout`` seconds
have passed, and says which: the caller asserts with its own message. Qt tests wait with
``qtbot.waitUntil``/``waitSignal`` instead, and asyncio code awaits the event itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["wait_until"]


def wait_until(
    condition: Callable[[], object], timeout: float = 10.0, interval: float = 0.05
) -> bool:
    """Whether ``condition()`` came true within ``timeout`` seconds (tried every ``interval``)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)  # the state is another thread's or process's: nothing to wait on
    return True

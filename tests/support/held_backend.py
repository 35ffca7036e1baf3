"""A backend whose passes wait for the test, and a bounded wait for another thread's state.

:class:`HeldBackend` hears nothing; each pass sets ``entered``, waits for ``release`` (at most
``WAIT`` seconds) and then takes ``pass_seconds`` like a real pass (the worker does not count
a cheaper turn as a pass). Audio appended meanwhile waits: the lag a session and ``/health``
report, and the backlog a session keeps.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from desktop_rt.engine.asr.backend import BackendTraits

WAIT = 60.0


class HeldBackend:
    """See the module docstring."""

    name = "held"
    traits = BackendTraits()
    detected_language = None

    def __init__(self, pass_seconds: float = 0.02) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()
        self.pass_seconds = pass_seconds

    def transcribe(self, audio, *, prompt=None, language=None, prefix=None, **options):
        self.entered.set()
        assert self.release.wait(WAIT), "the test never let the pass go"
        time.sleep(self.pass_seconds)  # the pass's own time (behaviour), not a wait
        return []

    def close(self) -> None:
        pass


def until(predicate: Callable[[], object], timeout: float = WAIT) -> bool:
    """Poll ``predicate`` (another thread's state, e.g. the worker's queue) until it is true."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True

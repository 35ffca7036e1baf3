"""Engine threads publish into the bridge through a gate that the UI thread closes at quit.

:class:`PublishGate` wraps :meth:`~desktop_rt.ui.bridge.EngineBridge.publish`: call it from any
thread; :meth:`~PublishGate.close` (on the UI thread, before the bridge may be deleted) waits for
an emit under way and makes every later call a no-op. So a thread that outlived its join at quit
(a driver that hung past its timeout) drops what it publishes instead of emitting into a deleted
QObject. See docs/design/app.md, "Quitting".
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

__all__ = ["PublishGate"]

log = logging.getLogger(__name__)


class PublishGate:
    """``publish`` until :meth:`close`; then nothing (each value dropped is logged)."""

    def __init__(self, publish: Callable[[object], None]):
        self._publish = publish
        self._lock = threading.RLock()  # a slot run directly may publish again
        self._open = True

    def __call__(self, value: object) -> None:
        with self._lock:
            if self._open:
                self._publish(value)
                return
        log.info("dropped %s published after the app shut down", type(value).__name__)

    @property
    def open(self) -> bool:
        return self._open

    def close(self) -> None:
        with self._lock:
            self._open = False

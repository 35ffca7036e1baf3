"""News of a repair of the embedded model, for whoever shows it (the window's status panel).

:func:`watch_repairs` registers a listener and returns the call that removes it; the embedded
model's code calls :func:`tell_repair` from the repairing thread (the model's loader at a start,
or the background check after it) with a :class:`RepairNotice` when a rebuild begins and when
it ends. A listener must return at once (the window's bridge only queues a signal); one that
raises is logged and skipped. Once :func:`watch_repairs`'s returned call is made, the listener
is not called again (not even by a notice already under way).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["REPAIRING", "RepairNotice", "RepairListener", "watch_repairs", "tell_repair"]

log = logging.getLogger(__name__)

REPAIRING = (
    "Repairing the built-in model: a damaged file is being rebuilt from its installed "
    "packages. This takes a few seconds."
)


@dataclass(frozen=True)
class RepairNotice:
    """``done`` False: a rebuild has begun; True: it is over. ``message`` is for people."""

    done: bool
    message: str


RepairListener = Callable[[RepairNotice], None]
_listeners: list[RepairListener] = []
_lock = threading.RLock()  # held while listeners run: after unwatch() none is still called


def watch_repairs(listener: RepairListener) -> Callable[[], None]:
    """Call ``listener`` with every :class:`RepairNotice` until the returned call is made."""
    with _lock:
        _listeners.append(listener)

    def unwatch() -> None:
        with _lock:
            if listener in _listeners:
                _listeners.remove(listener)

    return unwatch


def tell_repair(notice: RepairNotice) -> None:
    with _lock:
        for listener in list(_listeners):
            try:
                listener(notice)
            except Exception:  # noqa: BLE001 - a listener must never break a repair
                log.exception("a repair listener failed")

"""What the router hands out and reports: its errors, the runtime protocol, a model's status.

A :class:`ModelRuntime` is one loaded model (built unstarted by the model's kind; the router
calls ``start`` then, when it unloads it, ``stop``). :class:`ModelStatus` is the frozen view of
one model that other threads read (``GET /health``, tests).
"""

from __future__ import annotations

import enum
from dataclasses import asdict, dataclass
from typing import Protocol

from desktop_rt.errors import DesktopRtError

__all__ = [
    "RouterError",
    "UnknownModelError",
    "ModelLoadError",
    "LimitReachedError",
    "ModelWaitTimeoutError",
    "ModelRuntime",
    "ModelState",
    "ModelStatus",
]


class RouterError(DesktopRtError):
    """A session cannot get its model. ``code`` goes into the ``error`` event."""

    code = "model_error"


class UnknownModelError(RouterError):
    code = "model_not_found"


class ModelLoadError(RouterError):
    code = "model_load_failed"


class ModelWaitTimeoutError(RouterError):
    """The model could not be had within the router's ``wait_timeout`` (a load, a swap, or
    every loaded model busy); the message says which."""

    code = "model_wait_timeout"


class LimitReachedError(RouterError):
    """A concurrency limit is full. ``scope`` is ``model`` or ``global``."""

    def __init__(self, message: str, scope: str, limit: int, model: str | None = None):
        super().__init__(message)
        self.scope, self.limit, self.model = scope, limit, model
        self.code = f"{scope}_concurrency_limit"


class ModelRuntime(Protocol):
    """A loaded model. ``start`` loads it (raising :class:`ModelLoadError`), ``stop`` frees it.

    ``alive`` turns false when the model went away by itself (an external server exited).
    """

    @property
    def alive(self) -> bool: ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...


class ModelState(enum.Enum):
    STOPPED = "stopped"
    LOADING = "loading"
    READY = "ready"
    STOPPING = "stopping"


@dataclass(frozen=True)
class ModelStatus:
    """One model as other threads see it (``GET /health``, tests)."""

    id: str
    backend: str
    state: str
    sessions: int
    admitted: int
    waiting: int
    loads: int
    unload_at: float | None
    """``time.time()`` when ttl will unload it; None while pinned or without ttl."""
    last_unload: str | None

    def to_json(self) -> dict[str, object]:
        return asdict(self)

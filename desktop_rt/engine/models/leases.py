"""What the router hands out and keeps per model: :class:`Lease`, :class:`Admission`,
:class:`RouterSlot`.

A lease pins a loaded model for one session until :meth:`Lease.release`; an admission holds a
connection's concurrency slot until :meth:`Admission.release`. Both call back into the
:class:`~desktop_rt.engine.models.router.ModelRouter` that made them; the router alone changes
a :class:`RouterSlot`, on the server's loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from desktop_rt.engine.models.entry import ModelEntry
from desktop_rt.engine.models.router_types import ModelRuntime, ModelState, ModelStatus

__all__ = ["Lease", "Admission", "RouterSlot"]

log = logging.getLogger(__name__)


class RouterSlot:
    """One model's state in the router. ``pending`` is set while it loads (or waits for the
    model it swaps out), ``stopping`` while it stops; both end within their bounds."""

    def __init__(self, entry: ModelEntry, runtime: ModelRuntime | None = None):
        self.entry = entry
        self.state = ModelState.READY if runtime is not None else ModelState.STOPPED
        self.runtime = runtime
        self.leases: set[Lease] = set()
        self.pending: asyncio.Future[None] | None = None
        self.stopping: asyncio.Task[None] | None = None
        self.ttl_timer: asyncio.TimerHandle | None = None
        self.unload_at: float | None = None
        self.last_used = time.monotonic()
        self.admitted = 0
        self.waiting = 0
        self.loads = 1 if runtime is not None else 0
        self.last_unload: str | None = None

    def status(self) -> ModelStatus:
        return ModelStatus(
            self.entry.id,
            self.entry.backend,
            self.state.value,
            len(self.leases),
            self.admitted,
            self.waiting,
            self.loads,
            self.unload_at,
            self.last_unload,
        )


class Lease:
    """A session's hold on a loaded model. ``on_revoke(message)`` runs if it is unloaded by hand."""

    def __init__(self, slot: RouterSlot, on_release: Callable[[Lease], None]):
        self.slot = slot
        self._on_release = on_release
        self.model_id = slot.entry.id
        self.runtime = slot.runtime
        self.on_revoke: Callable[[str], None] | None = None
        self.released = False

    def release(self) -> None:
        """The session closed. Idempotent."""
        if not self.released:
            self.released = True
            self._on_release(self)

    def revoke(self, message: str) -> None:
        """The router stopped the model under this lease (it has forgotten the lease already)."""
        self.released = True
        if self.on_revoke is not None:
            try:
                self.on_revoke(message)
            except Exception:
                log.exception("ending a session of %s failed", self.model_id)


class Admission:
    """A connection's concurrency slot: global from the handshake, per model once it is known."""

    def __init__(self, bind: Callable[[str], str], on_release: Callable[[Admission], None]) -> None:
        self._bind = bind
        self._on_release = on_release
        self.model_id: str | None = None
        self.released = False

    def bind(self, model_id: str) -> None:
        """Count this connection against ``model_id``'s limit (an id or an alias); raises
        :class:`~desktop_rt.engine.models.router_types.LimitReachedError` when it is full."""
        if self.model_id is None and not self.released:
            self.model_id = self._bind(model_id)

    def release(self) -> None:
        if not self.released:
            self.released = True
            self._on_release(self)

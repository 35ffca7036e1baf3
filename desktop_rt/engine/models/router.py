"""Which model a session gets, and when models load and unload (after llama-swap).

Call order: :meth:`ModelRouter.admit` at the handshake (concurrency limits), then
:meth:`ModelRouter.acquire` for a :class:`Lease` (loads on demand), :meth:`Lease.release` at close.
Invariants: an open lease pins its model (never swapped out or unloaded by ``ttl``); at most
``max_loaded_models`` are loaded or loading; ``ttl`` counts from the last close (0: never);
:meth:`ModelRouter.unload` revokes the leases at once. Everything runs on the server's loop except
:meth:`ModelRouter.snapshot` and :meth:`ModelRouter.wait_for`. A loaded model is a runtime that
its kind builds (:mod:`~desktop_rt.engine.models.kinds`). More in docs/design/models.md.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

from desktop_rt.engine.models.catalogue import ModelEntry, ModelsConfig
from desktop_rt.engine.models.router_types import (
    LimitReachedError,
    ModelLoadError,
    ModelRuntime,
    ModelState,
    ModelStatus,
    RouterError,
    UnknownModelError,
)

__all__ = [
    "RouterError",
    "UnknownModelError",
    "ModelLoadError",
    "LimitReachedError",
    "ModelRuntime",
    "ModelState",
    "ModelStatus",
    "Lease",
    "Admission",
    "ModelRouter",
]

log = logging.getLogger(__name__)


class Lease:
    """A session's hold on a loaded model. ``on_revoke(message)`` runs if it is unloaded by hand."""

    def __init__(self, router: ModelRouter, slot: _Slot):
        self._router, self._slot = router, slot
        self.model_id = slot.entry.id
        self.runtime = slot.runtime
        self.on_revoke: Callable[[str], None] | None = None
        self.released = False

    def release(self) -> None:
        """The session closed. Idempotent."""
        if not self.released:
            self.released = True
            self._router._release(self._slot, self)

    def _revoke(self, message: str) -> None:
        self.released = True
        if self.on_revoke is not None:
            try:
                self.on_revoke(message)
            except Exception:
                log.exception("ending a session of %s failed", self.model_id)


class Admission:
    """A connection's concurrency slot: global from the handshake, per model once it is known."""

    def __init__(self, router: ModelRouter):
        self._router = router
        self.model_id: str | None = None
        self.released = False

    def bind(self, model_id: str) -> None:
        """Count this connection against ``model_id``'s limit; raises :class:`LimitReachedError`."""
        if self.model_id is None and not self.released:
            self._router._check_model_limit(model_id)
            self.model_id = model_id
            self._router._slots[model_id].admitted += 1
            self._router._publish()

    def release(self) -> None:
        if not self.released:
            self.released = True
            self._router._unadmit(self)


class _Slot:
    def __init__(self, entry: ModelEntry, runtime: ModelRuntime | None = None):
        self.entry = entry
        self.state = ModelState.READY if runtime is not None else ModelState.STOPPED
        self.runtime = runtime
        self.leases: set[Lease] = set()
        self.loading: asyncio.Future[None] | None = None
        self.ttl_timer: asyncio.TimerHandle | None = None
        self.unload_at: float | None = None
        self.last_used = time.monotonic()
        self.admitted = 0
        self.waiting = 0
        self.loads = 1 if runtime is not None else 0
        self.last_unload: str | None = None


class ModelRouter:
    """See the module docstring. ``make_runtime(entry)`` builds an unstarted runtime;
    ``preloaded`` maps model ids to runtimes already started (the server's primary model)."""

    def __init__(
        self,
        config: ModelsConfig,
        make_runtime: Callable[[ModelEntry], ModelRuntime],
        preloaded: dict[str, ModelRuntime] | None = None,
    ):
        self.config = config
        self._make_runtime = make_runtime
        preloaded = preloaded or {}
        self._slots = {e.id: _Slot(e, preloaded.get(e.id)) for e in config.entries}
        self._admitted = 0
        self._changed: asyncio.Event | None = None
        self._cond = threading.Condition()
        self._status: dict[str, ModelStatus] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False
        self._publish()

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self._slots)

    # ---- any thread ------------------------------------------------------------------------

    def snapshot(self) -> dict[str, ModelStatus]:
        with self._cond:
            return dict(self._status)

    def wait_for(
        self, predicate: Callable[[dict[str, ModelStatus]], bool], timeout: float | None = None
    ) -> bool:
        """Block until ``predicate(snapshot)`` holds; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: predicate(self._status), timeout)

    # ---- admission (handshake) -------------------------------------------------------------

    def admit(self, model_id: str | None) -> Admission:
        """A slot for a new connection; ``model_id`` when the URL named a configured model."""
        limit = self.config.global_concurrency_limit
        if limit and self._admitted >= limit:
            raise LimitReachedError(
                f"The server already has {self._admitted} sessions open, its global_concurrency_limit "
                f"of {limit}. Close a session, or raise global_concurrency_limit in models.toml.",
                "global",
                limit,
            )
        if model_id is not None:
            self._check_model_limit(model_id)
        admission = Admission(self)
        self._admitted += 1
        if model_id is not None:
            admission.model_id = model_id
            self._slots[model_id].admitted += 1
        self._publish()
        return admission

    def _check_model_limit(self, model_id: str) -> None:
        slot = self._slots[model_id]
        limit = slot.entry.concurrency_limit
        if limit and slot.admitted >= limit:
            raise LimitReachedError(
                f"The model '{model_id}' already has {slot.admitted} sessions open, its concurrency_limit "
                f"of {limit}. Close a session, or raise concurrency_limit for it in models.toml.",
                "model",
                limit,
                model_id,
            )

    def _unadmit(self, admission: Admission) -> None:
        self._admitted -= 1
        if admission.model_id is not None:
            self._slots[admission.model_id].admitted -= 1
        self._publish()

    # ---- leases ----------------------------------------------------------------------------

    async def acquire(self, model_id: str) -> Lease:
        """Pin ``model_id``, loading it first (and swapping out an idle model) if need be."""
        slot = self._slots.get(model_id)
        if slot is None:
            raise UnknownModelError(f"unknown model {model_id}")
        while True:
            if self._closed:
                raise ModelLoadError("the server is stopping")
            if (
                slot.state is ModelState.READY
                and slot.runtime is not None
                and not slot.runtime.alive
            ):
                await self._stop(slot, "found stopped (its process had exited)")
                continue
            if slot.state is ModelState.READY:
                lease = Lease(self, slot)
                slot.leases.add(lease)
                slot.last_used = time.monotonic()
                self._cancel_ttl(slot)
                self._publish()
                return lease
            if slot.state is ModelState.LOADING and slot.loading is not None:
                await asyncio.shield(slot.loading)
                continue
            if slot.state is ModelState.STOPPED:
                if self._loaded_count() < self.config.max_loaded_models:
                    self._begin_load(slot)
                    continue
                victim = self._idle_victim()
                if victim is not None:
                    await self._stop(victim, "swapped out for " + model_id)
                    continue
            slot.waiting += 1  # pinned models hold the memory, or a stop is under way
            self._publish(wake=False)
            try:
                await self._wait_change()
            finally:
                slot.waiting -= 1
                self._publish(wake=False)

    def _release(self, slot: _Slot, lease: Lease) -> None:
        slot.leases.discard(lease)
        slot.last_used = time.monotonic()
        if not slot.leases and slot.state is ModelState.READY:
            self._arm_ttl(slot)
        self._publish()

    # ---- unloading -------------------------------------------------------------------------

    async def unload(
        self, model_id: str | None = None, reason: str = "unloaded by hand"
    ) -> list[str]:
        """Stop ``model_id`` (None: every model) now, ending its sessions; returns what stopped."""
        if model_id is not None and model_id not in self._slots:
            raise UnknownModelError(f"unknown model {model_id}")
        stopped = []
        for slot in [self._slots[model_id]] if model_id else list(self._slots.values()):
            if slot.state is ModelState.LOADING and slot.loading is not None:
                try:
                    await asyncio.shield(slot.loading)
                except RouterError:
                    continue
            if slot.state is ModelState.READY:
                await self._stop(slot, reason)
                stopped.append(slot.entry.id)
        return stopped

    async def close(self) -> None:
        """The server stops: no new leases; every model is stopped."""
        self._closed = True
        await self.unload(reason="stopped with the server")
        for task in list(self._tasks):
            task.cancel()

    async def _stop(self, slot: _Slot, reason: str) -> None:
        entry = slot.entry
        self._cancel_ttl(slot)
        slot.state = ModelState.STOPPING
        self._publish()
        message = f"The model '{entry.id}' was {reason}, which ends its sessions. Connect again to load it again."
        for lease in list(slot.leases):
            slot.leases.discard(lease)
            lease._revoke(message)
        runtime, slot.runtime = slot.runtime, None
        log.info("unloading model %s (%s)", entry.id, reason)
        try:
            if runtime is not None:
                await runtime.stop()
        except Exception:
            log.exception("stopping model %s failed", entry.id)
        slot.state = ModelState.STOPPED
        slot.last_unload = reason
        self._publish()

    # ---- internals -------------------------------------------------------------------------

    def _loaded_count(self) -> int:
        return sum(s.state is not ModelState.STOPPED for s in self._slots.values())

    def _idle_victim(self) -> _Slot | None:
        idle = [s for s in self._slots.values() if s.state is ModelState.READY and not s.leases]
        return min(idle, key=lambda s: s.last_used) if idle else None

    def _begin_load(self, slot: _Slot) -> None:
        slot.state = ModelState.LOADING
        loading: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        slot.loading = loading
        self._publish()
        self._spawn(self._load(slot, loading))

    async def _load(self, slot: _Slot, done: asyncio.Future[None]) -> None:
        entry = slot.entry
        log.info("loading model %s", entry.id)
        try:
            runtime = self._make_runtime(entry)
            await runtime.start()
        except Exception as exc:  # noqa: BLE001 - any failure becomes the sessions' error
            log.warning("model %s failed to load: %s", entry.id, exc)
            slot.state = ModelState.STOPPED
            slot.last_unload = "failed to load"
            error = (
                exc
                if isinstance(exc, ModelLoadError)
                else ModelLoadError(str(exc) or type(exc).__name__)
            )
            done.set_exception(error)
            done.exception()  # retrieved: nobody may be waiting any more
            self._publish()
            return
        slot.runtime = runtime
        slot.state = ModelState.READY
        slot.loads += 1
        slot.last_used = time.monotonic()
        done.set_result(None)
        if not slot.leases:
            self._arm_ttl(slot)
        self._publish()

    def _arm_ttl(self, slot: _Slot) -> None:
        self._cancel_ttl(slot)
        ttl = slot.entry.ttl
        if ttl > 0 and not self._closed:
            loop = asyncio.get_running_loop()
            slot.unload_at = time.time() + ttl
            slot.ttl_timer = loop.call_later(ttl, self._ttl_expired, slot)

    def _cancel_ttl(self, slot: _Slot) -> None:
        if slot.ttl_timer is not None:
            slot.ttl_timer.cancel()
        slot.ttl_timer, slot.unload_at = None, None

    def _ttl_expired(self, slot: _Slot) -> None:
        slot.ttl_timer, slot.unload_at = None, None
        if slot.state is ModelState.READY and not slot.leases:
            self._spawn(self._stop(slot, f"unloaded after its ttl of {slot.entry.ttl:g} s"))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _wait_change(self) -> None:
        if self._changed is None:
            self._changed = asyncio.Event()
        await self._changed.wait()

    def _publish(self, wake: bool = True) -> None:
        """Show the new state to other threads; ``wake`` also wakes acquirers waiting on the loop."""
        if wake and self._changed is not None:
            self._changed.set()
            self._changed = None
        status = {
            model_id: ModelStatus(
                model_id,
                s.entry.backend,
                s.state.value,
                len(s.leases),
                s.admitted,
                s.waiting,
                s.loads,
                s.unload_at,
                s.last_unload,
            )
            for model_id, s in self._slots.items()
        }
        with self._cond:
            self._status = status
            self._cond.notify_all()

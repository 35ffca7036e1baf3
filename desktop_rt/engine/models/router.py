"""Which model a session gets, and when models load and unload (after llama-swap).

Call order: :meth:`ModelRouter.admit` at the handshake (concurrency limits), then
:meth:`ModelRouter.acquire` for a :class:`Lease` (loads on demand), :meth:`Lease.release` at close.
Invariants: an open lease pins its model (never swapped out or unloaded by ``ttl``); at most
``max_loaded_models`` are loaded or loading; every wait has a bound (``wait_timeout`` for a
session, ``load_timeout`` for a load, :data:`STOP_TIMEOUT` for a stop); loads and stops are the
router's own tasks, so a session that leaves never leaves a model half swapped. Everything runs on
the server's loop except :meth:`ModelRouter.snapshot` and :meth:`ModelRouter.wait_for`.
More in docs/design/models.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

from desktop_rt.engine.models.aliases import AliasMap
from desktop_rt.engine.models.bounded import (
    STOP_TIMEOUT,
    describe,
    discard_load,
    stop_runtime,
    within,
)
from desktop_rt.engine.models.catalogue import ModelEntry, ModelsConfig
from desktop_rt.engine.models.leases import Admission, Lease, RouterSlot
from desktop_rt.engine.models.router_types import (
    LimitReachedError,
    ModelLoadError,
    ModelRuntime,
    ModelState,
    ModelStatus,
    ModelWaitTimeoutError,
    RouterError,
    UnknownModelError,
)

__all__ = [
    "RouterError",
    "UnknownModelError",
    "ModelLoadError",
    "LimitReachedError",
    "ModelWaitTimeoutError",
    "ModelRuntime",
    "ModelState",
    "ModelStatus",
    "Lease",
    "Admission",
    "ModelRouter",
    "STOP_TIMEOUT",
]

log = logging.getLogger(__name__)


class ModelRouter:
    """See the module docstring. ``make_runtime(entry)`` builds an unstarted runtime;
    ``preloaded`` maps model ids to runtimes already started (the server's primary model);
    OpenAI's model names route to ``default_model`` (default: the embedded model)."""

    def __init__(
        self,
        config: ModelsConfig,
        make_runtime: Callable[[ModelEntry], ModelRuntime],
        preloaded: dict[str, ModelRuntime] | None = None,
        *,
        default_model: str | None = None,
        holds_memory: Callable[[ModelEntry], bool] = lambda entry: True,
    ):
        self.config = config
        self._holds_memory = holds_memory
        self.aliases: AliasMap = config.alias_map(default_model)
        self._make_runtime = make_runtime
        preloaded = preloaded or {}
        self._slots = {e.id: RouterSlot(e, preloaded.get(e.id)) for e in config.entries}
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

    def resolve(self, name: str) -> str | None:
        """The model id that ``name`` (an id or an alias) stands for; None if it names none."""
        return self.aliases.resolve(name)

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
        admission = Admission(self._bind, self._unadmit)
        if model_id is not None:
            self._check_model_limit(self._slot(model_id))
        self._admitted += 1
        if model_id is not None:
            admission.bind(model_id)
        self._publish()
        return admission

    def _bind(self, model_id: str) -> str:
        slot = self._slot(model_id)
        self._check_model_limit(slot)
        slot.admitted += 1
        self._publish()
        return slot.entry.id

    def _check_model_limit(self, slot: RouterSlot) -> None:
        limit = slot.entry.concurrency_limit
        if limit and slot.admitted >= limit:
            raise LimitReachedError(
                f"The model '{slot.entry.id}' already has {slot.admitted} sessions open, its "
                f"concurrency_limit of {limit}. Close a session, or raise concurrency_limit for it "
                f"in models.toml.",
                "model",
                limit,
                slot.entry.id,
            )

    def _unadmit(self, admission: Admission) -> None:
        self._admitted -= 1
        if admission.model_id is not None:
            self._slots[admission.model_id].admitted -= 1
        self._publish()

    # ---- leases ----------------------------------------------------------------------------

    async def acquire(self, model_id: str) -> Lease:
        """Pin ``model_id`` (an id or an alias), loading it first (and swapping out an idle model)
        if need be; :class:`ModelWaitTimeoutError` when that takes over ``wait_timeout``."""
        slot = self._slot(model_id)
        slot.waiting += 1
        self._publish(wake=False)
        try:
            async with asyncio.timeout(self.config.wait_timeout):
                return await self._lease(slot)
        except TimeoutError:
            raise ModelWaitTimeoutError(self._wait_message(slot)) from None
        finally:
            slot.waiting -= 1
            self._publish()  # a model nobody waits for any more may be swapped out

    async def _lease(self, slot: RouterSlot) -> Lease:
        """Every await here is on a router task or an event: leaving it changes no state."""
        while True:
            if self._closed:
                raise ModelLoadError("the server is stopping")
            if slot.pending is not None:  # it loads, or a swap for it is under way
                await asyncio.shield(slot.pending)
                continue
            if slot.state is ModelState.READY:
                if slot.runtime is not None and not slot.runtime.alive:
                    self._stop_soon(slot, "found stopped (its process had exited)")
                    continue
                lease = Lease(slot, self._release)
                slot.leases.add(lease)
                slot.last_used = time.monotonic()
                self._cancel_ttl(slot)
                self._publish()
                return lease
            if slot.state is ModelState.STOPPED and self._make_room(slot):
                continue
            await self._wait_change()  # pinned models hold the memory, or a stop is under way

    def _make_room(self, slot: RouterSlot) -> bool:
        """Begin loading ``slot`` (after swapping out the least recently used idle model if
        every place is taken); False when every loaded model is pinned. A model that sessions
        wait for is not idle: swapping it out before they take their lease would thrash."""
        if not self._holds_memory(slot.entry) or (
            self._loaded_count() < self.config.max_loaded_models
        ):
            self._begin_load(slot, None)
            return True
        idle = [
            s
            for s in self._slots.values()
            if s.state is ModelState.READY
            and not s.leases
            and not s.waiting
            and self._holds_memory(s.entry)
        ]
        if not idle:
            return False
        victim = min(idle, key=lambda s: s.last_used)
        self._begin_load(slot, self._stop_soon(victim, "swapped out for " + slot.entry.id))
        return True

    def _wait_message(self, slot: RouterSlot) -> str:
        head = (
            f"The model '{slot.entry.id}' could not be had within {self.config.wait_timeout:g} s "
            f"(wait_timeout in models.toml): "
        )
        if slot.state is ModelState.LOADING:
            return head + "it is still loading. Its load goes on: connect again shortly."
        busy = [
            f"{s.entry.id} ({s.state.value}, {len(s.leases)} sessions)"
            for s in self._slots.values()
            if s.state is not ModelState.STOPPED
        ]
        return head + (
            f"at most {self.config.max_loaded_models} models are loaded at once "
            f"(max_loaded_models) and each is in use: {', '.join(busy)}. Close a session, raise "
            f"max_loaded_models, or connect again later."
        )

    def _release(self, lease: Lease) -> None:
        slot = lease.slot
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
        slots = [self._slot(model_id)] if model_id else list(self._slots.values())
        stopped = []
        for slot in slots:
            if slot.pending is not None:
                with contextlib.suppress(RouterError):
                    await asyncio.shield(slot.pending)
            if slot.state is ModelState.READY:
                await asyncio.shield(self._stop_soon(slot, reason))
                stopped.append(slot.entry.id)
            elif slot.stopping is not None:
                await asyncio.shield(slot.stopping)
        return stopped

    async def close(self) -> None:
        """The server stops: no new leases; every model is stopped."""
        self._closed = True
        await self.unload(reason="stopped with the server")
        for task in list(self._tasks):
            task.cancel()

    def _stop_soon(self, slot: RouterSlot, reason: str) -> asyncio.Task[None]:
        """Mark a ready ``slot`` stopping and revoke its leases now; the stop is a router task."""
        if slot.stopping is not None:
            return slot.stopping
        self._cancel_ttl(slot)
        slot.state = ModelState.STOPPING
        self._publish()
        message = f"The model '{slot.entry.id}' was {reason}, which ends its sessions. Connect again to load it again."
        for lease in list(slot.leases):
            slot.leases.discard(lease)
            lease.revoke(message)
        runtime, slot.runtime = slot.runtime, None
        slot.stopping = self._spawn(self._stop(slot, runtime, reason))
        return slot.stopping

    async def _stop(self, slot: RouterSlot, runtime: ModelRuntime | None, reason: str) -> None:
        log.info("unloading model %s (%s)", slot.entry.id, reason)
        try:
            if runtime is not None:
                await stop_runtime(slot.entry, runtime)
        finally:
            slot.state, slot.stopping, slot.last_unload = ModelState.STOPPED, None, reason
            self._publish()

    # ---- loading ---------------------------------------------------------------------------

    def _begin_load(self, slot: RouterSlot, after: asyncio.Task[None] | None) -> None:
        """Mark ``slot`` loading now; the load (after the ``after`` stop) is a router task."""
        slot.state = ModelState.LOADING
        slot.pending = asyncio.get_running_loop().create_future()
        self._publish()
        self._spawn(self._load(slot, slot.pending, after))

    async def _load(
        self, slot: RouterSlot, done: asyncio.Future[None], after: asyncio.Task[None] | None
    ) -> None:
        entry = slot.entry
        try:
            if after is not None:
                await asyncio.shield(after)  # the model swapped out frees its place first
            log.info("loading model %s", entry.id)
            runtime = self._make_runtime(entry)
            start = asyncio.ensure_future(runtime.start())
            if not await within(start, self.config.load_timeout):
                self._spawn(discard_load(entry, runtime, start))
                raise ModelLoadError(
                    f"it did not load within {self.config.load_timeout:g} s "
                    f"(load_timeout in models.toml)"
                )
            start.result()
        except BaseException as exc:  # any failure becomes the sessions' error
            log.warning("model %s failed to load: %s", entry.id, exc)
            slot.state, slot.pending, slot.last_unload = ModelState.STOPPED, None, "failed to load"
            done.set_exception(
                exc if isinstance(exc, ModelLoadError) else ModelLoadError(describe(exc))
            )
            done.exception()  # retrieved: nobody may be waiting any more
            self._publish()
            if not isinstance(exc, Exception):
                raise
            return
        slot.runtime, slot.state, slot.pending = runtime, ModelState.READY, None
        slot.loads += 1
        slot.last_used = time.monotonic()
        done.set_result(None)
        if not slot.leases:
            self._arm_ttl(slot)
        self._publish()

    # ---- internals -------------------------------------------------------------------------

    def _slot(self, name: str) -> RouterSlot:
        model_id = self.resolve(name)
        if model_id is None:
            raise UnknownModelError(f"unknown model {name}")
        return self._slots[model_id]

    def _loaded_count(self) -> int:
        """Models loaded or on their way in or out that hold this machine's memory."""
        return sum(
            s.state is not ModelState.STOPPED and self._holds_memory(s.entry)
            for s in self._slots.values()
        )

    def _arm_ttl(self, slot: RouterSlot) -> None:
        self._cancel_ttl(slot)
        ttl = slot.entry.ttl
        if ttl > 0 and not self._closed:
            loop = asyncio.get_running_loop()
            slot.unload_at = time.time() + ttl
            slot.ttl_timer = loop.call_later(ttl, self._ttl_expired, slot)

    def _cancel_ttl(self, slot: RouterSlot) -> None:
        if slot.ttl_timer is not None:
            slot.ttl_timer.cancel()
        slot.ttl_timer, slot.unload_at = None, None

    def _ttl_expired(self, slot: RouterSlot) -> None:
        slot.ttl_timer, slot.unload_at = None, None
        if slot.state is ModelState.READY and not slot.leases:
            self._stop_soon(slot, f"unloaded after its ttl of {slot.entry.ttl:g} s")

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _wait_change(self) -> None:
        if self._changed is None:
            self._changed = asyncio.Event()
        await self._changed.wait()

    def _publish(self, wake: bool = True) -> None:
        """Show the new state to other threads; ``wake`` also wakes acquirers waiting on the loop."""
        if wake and self._changed is not None:
            self._changed.set()
            self._changed = None
        status = {model_id: s.status() for model_id, s in self._slots.items()}
        with self._cond:
            self._status = status
            self._cond.notify_all()

"""Running a model runtime's ``start`` and ``stop`` within bounds, for the router.

:func:`within` waits for a step without cancelling it; :func:`stop_runtime` gives a stop
:data:`STOP_TIMEOUT` seconds, then counts the model as stopped and only logs what happens later;
:func:`discard_load` stops what a load given up on loaded, once that load ends.
"""

from __future__ import annotations

import asyncio
import logging

from desktop_rt.engine.models.entry import ModelEntry
from desktop_rt.engine.models.router_types import ModelRuntime

__all__ = ["STOP_TIMEOUT", "describe", "within", "stop_runtime", "discard_load"]

log = logging.getLogger(__name__)

STOP_TIMEOUT = 60.0
"""Seconds a runtime may take to stop; past it the model counts as stopped (and it is logged)."""


def describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


async def within(task: asyncio.Future[None], timeout: float) -> bool:
    """Wait at most ``timeout`` s for ``task``; False if it still runs then (it goes on)."""
    done, _ = await asyncio.wait({task}, timeout=timeout)
    return bool(done)


def _failure(task: asyncio.Future[None]) -> BaseException | None:
    return None if task.cancelled() else task.exception()


async def stop_runtime(entry: ModelEntry, runtime: ModelRuntime) -> None:
    """Stop ``runtime`` within :data:`STOP_TIMEOUT`; failures and overruns are only logged."""
    stop = asyncio.ensure_future(runtime.stop())
    if not await within(stop, STOP_TIMEOUT):
        log.warning(
            "model %s: still stopping after %g s; counted as stopped", entry.id, STOP_TIMEOUT
        )
        stop.add_done_callback(lambda task: _log_failure(entry, task))
    else:
        _log_failure(entry, stop)


async def discard_load(
    entry: ModelEntry, runtime: ModelRuntime, start: asyncio.Future[None]
) -> None:
    """A load given up on (past ``load_timeout``): once it ends, stop what it loaded."""
    await asyncio.wait({start})
    if _failure(start) is None:
        await stop_runtime(entry, runtime)


def _log_failure(entry: ModelEntry, task: asyncio.Future[None]) -> None:
    error = _failure(task)
    if error is not None:
        log.error("stopping model %s failed: %s", entry.id, describe(error))

"""The app's embedded server: loaded and started off the UI thread, on the user's port or any free one.

:class:`EmbeddedServer` is what the window uses: :meth:`~EmbeddedServer.start` loads the model
and starts the server on a helper thread, reporting :class:`ServerState` values through
``publish``, and from :meth:`~EmbeddedServer.start` to :meth:`~EmbeddedServer.stop` any repair
of the built-in model (:class:`~desktop_rt.engine.models.repair_notice.RepairNotice`);
:meth:`~EmbeddedServer.stop` (blocking: call it on a helper thread) waits for a start still
under way, then stops the server and closes the backend. The functions below it:
:func:`load_niced` (the model loads on a thread at :func:`lower_thread_priority`, so its native
compute threads inherit it while the server and inference threads keep the UI's priority; an
:class:`EnginePriority` says how low: a nice value and a Linux scheduling policy) and
:func:`start_embedded_server`, which blocks until the server listens.
Nothing here touches Qt.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from desktop_rt.config import ServerSettings
from desktop_rt.engine.asr.backend import AsrBackend
from desktop_rt.engine.models.repair_notice import RepairNotice, watch_repairs
from desktop_rt.errors import DesktopRtError

if TYPE_CHECKING:
    from desktop_rt.engine.server.server import RealtimeServer

__all__ = [
    "ENGINE_NICENESS",
    "ENGINE_PRIORITY",
    "EnginePriority",
    "ServerState",
    "EmbeddedServer",
    "load_niced",
    "lower_thread_priority",
    "set_thread_policy",
    "start_embedded_server",
]

log = logging.getLogger(__name__)

ENGINE_NICENESS = 5
_POLICIES = ("other", "batch", "idle")


@dataclass(frozen=True)
class EnginePriority:
    """How the model's native compute threads yield the CPU (Linux; elsewhere nothing).

    ``niceness`` is added to the loading thread's nice value; ``policy`` is its scheduling
    policy: "other" (the normal one), "batch" (a CPU-bound thread: it does not preempt a
    thread that is running when it wakes) or "idle" (runs only when no other thread wants
    the core). A thread may lower its own policy this way without privileges; the threads it
    creates inherit both (docs/design/app.md, "The UI thread").
    """

    niceness: int = ENGINE_NICENESS
    policy: str = "other"

    def __post_init__(self) -> None:
        if self.policy not in _POLICIES:
            raise ValueError(f"scheduling policy {self.policy!r} is not one of {_POLICIES}")


ENGINE_PRIORITY = EnginePriority()
"""What the app's model threads run at (bench_app.py --engine-policy tries the others)."""


@dataclass(frozen=True)
class ServerState:
    """``state``: "starting", "ready", "failed" or "stopped"; ``message`` is for people."""

    state: str
    model: str
    url: str = ""
    port: int | None = None
    api_key: str | None = None
    message: str = ""


class EmbeddedServer:
    """See the module docstring. ``backend_factory(spec)`` loads a model (it may raise);
    ``owns_backend`` False leaves the backend open on :meth:`stop` (tests share one)."""

    def __init__(
        self,
        backend_factory: Callable[[str], AsrBackend],
        publish: Callable[[ServerState | RepairNotice], None],
        *,
        owns_backend: bool = True,
    ):
        self._backend_factory = backend_factory
        self._publish = publish
        self._owns_backend = owns_backend
        self._backend: AsrBackend | None = None
        self._starting: threading.Thread | None = None
        self._unwatch: Callable[[], None] | None = None
        self.server: RealtimeServer | None = None
        self.priority = ENGINE_PRIORITY
        """What the model's native threads run at: set before :meth:`start`."""

    @property
    def backend(self) -> AsrBackend | None:
        """The loaded model while the server runs (file imports share it via its worker)."""
        return self._backend if self.server is not None else None

    def start(self, settings: ServerSettings, spec: str, message: str) -> None:
        """Publish "starting" with ``message``, then load and start on a helper thread."""
        log.info("loading the speech model %s", spec)
        self._publish(ServerState("starting", spec, message=message))
        if self._unwatch is None:
            self._unwatch = watch_repairs(self._publish)
        thread = threading.Thread(
            target=self._start_reporting,
            args=(settings, spec),
            name="desktop-rt-start",
            daemon=True,
        )
        self._starting = thread
        thread.start()

    def _start_reporting(self, settings: ServerSettings, spec: str) -> None:
        """:meth:`start_here`, with an error it did not expect published as "failed", not lost."""
        try:
            self.start_here(settings, spec)
        except Exception as exc:  # noqa: BLE001 - a helper thread's error must reach the window
            log.exception("the embedded server could not start")
            self._close_backend()
            message = f"The speech engine could not start ({exc}); the log has the details."
            self._publish(ServerState("failed", spec, message=message))

    def start_here(self, settings: ServerSettings, spec: str) -> None:
        """Load and start on this thread; publishes "ready" (``server`` is set by then) or "failed"."""
        from desktop_rt.engine.models.kinds import describe_model
        from desktop_rt.engine.server.server import ServerError

        model = describe_model(spec)
        try:
            self._backend = load_niced(self._backend_factory, spec, self.priority)
        except (DesktopRtError, OSError, RuntimeError, ValueError) as exc:
            message = f"The speech model could not be loaded: {exc}"
            self._publish(ServerState("failed", model, message=message))
            return
        try:
            server, note = start_embedded_server(settings, model, self._backend)
        except ServerError as exc:
            self._close_backend()
            self._publish(ServerState("failed", model, message=str(exc)))
            return
        self.server = server
        self._publish(ServerState("ready", model, server.url, server.port, settings.api_key, note))

    def stop(self) -> None:
        """Wait for a start under way, stop the server, close the backend (blocks)."""
        starting, self._starting = self._starting, None
        if starting is not None and starting is not threading.current_thread():
            starting.join()
        server, self.server = self.server, None
        if server is not None:
            server.stop()
        self._close_backend()
        unwatch, self._unwatch = self._unwatch, None
        if unwatch is not None:
            unwatch()

    def _close_backend(self) -> None:
        backend, self._backend = self._backend, None
        if backend is not None and self._owns_backend:
            backend.close()


def load_niced(
    factory: Callable[[str], AsrBackend], spec: str, priority: EnginePriority = ENGINE_PRIORITY
) -> AsrBackend:
    """``factory(spec)`` run on a thread of its own at the engine's lower ``priority``, returned
    (or its error raised) here. The model's native compute threads, created while it loads,
    inherit that priority; the caller's thread, and the server and inference threads it starts
    next, keep the UI's: a Python thread niced and waiting for a core while holding the GIL
    stalled the UI thread (docs/design/app.md, "The UI thread")."""
    loaded: list[AsrBackend] = []
    errors: list[BaseException] = []

    def load() -> None:
        lower_thread_priority(priority.niceness)
        set_thread_policy(priority.policy)
        try:
            loaded.append(factory(spec))
        except BaseException as exc:  # noqa: BLE001 - raised again on the caller's thread
            errors.append(exc)

    thread = threading.Thread(target=load, name="desktop-rt-model-load", daemon=True)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return loaded[0]


def lower_thread_priority(niceness: int = ENGINE_NICENESS) -> None:
    """Make the calling thread (and threads it creates) yield the CPU to the UI and the microphone.

    On Linux ``setpriority(PRIO_PROCESS, 0, ...)`` acts on the calling thread only; elsewhere this
    does nothing. Inference then runs as fast as before on an idle machine, but a busy one keeps
    the window responsive.
    """
    if sys.platform != "linux":
        return
    try:
        os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) + niceness)
    except (AttributeError, OSError) as exc:
        log.debug("could not lower the engine's priority: %s", exc)


def set_thread_policy(policy: str) -> None:
    """Put the calling thread (and threads it creates) under a scheduling ``policy`` of
    :class:`EnginePriority`, keeping its nice value. Linux only; a failure is logged."""
    if sys.platform != "linux":
        return
    policies = {"other": os.SCHED_OTHER, "batch": os.SCHED_BATCH, "idle": os.SCHED_IDLE}
    try:
        os.sched_setscheduler(0, policies[policy], os.sched_param(0))
    except OSError as exc:
        log.debug("could not set the engine's scheduling policy: %s", exc)


def start_embedded_server(
    settings: ServerSettings, model: str, backend: AsrBackend
) -> tuple[RealtimeServer, str]:
    """Start a server for ``model`` on ``backend`` (the caller keeps owning it).

    Returns the running server and a note for people: "" or why it took another port. Raises
    :class:`~desktop_rt.engine.server.server.ServerError` when it could not start on any port.
    """
    from desktop_rt.engine.server.server import RealtimeServer, ServerConfig, ServerError

    config = ServerConfig(
        port=settings.port,
        api_key=settings.api_key,
        allowed_origins=settings.allowed_origins,
        model_id=model,
    )
    error = ServerError("the server could not start")
    for port in dict.fromkeys((settings.port, 0)):  # the chosen port, else any free one
        server = RealtimeServer(replace(config, port=port), backend)
        try:
            server.start()
        except ServerError as exc:
            error = exc
            continue
        note = (
            f"Port {settings.port} is busy, so the server took port {server.port} instead."
            if port != settings.port
            else ""
        )
        return server, note
    raise error

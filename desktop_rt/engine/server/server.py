"""The embedded realtime server: OpenAI-Realtime-compatible transcription on localhost.

Call order: ``RealtimeServer(config, backend).start()`` loads the primary model
(``config.model_id``) and returns once the socket listens (``.port``, ``.url``); websocket
clients then connect (:mod:`~desktop_rt.engine.server.connection`) and the window opens
:meth:`~RealtimeServer.open_local_session`; ``stop()`` closes every connection and session,
unloads every model and joins the threads. With ``config.models`` it routes between several
models (:class:`~desktop_rt.engine.models.router.ModelRouter`). Routes: ``/v1/realtime``,
``GET /health``, ``/v1/models``, ``/v1/activity``, ``/unload`` (rules in ``handshake``),
``POST /v1/audio/transcriptions`` (:mod:`~desktop_rt.engine.server.rest`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import replace
from http import HTTPStatus
from typing import Any

from websockets.asyncio.server import ServerConnection, serve
from websockets.http11 import Request, Response

from desktop_rt.engine.asr.backend import AsrBackend
from desktop_rt.engine.asr.worker import InferenceWorker
from desktop_rt.engine.models.catalogue import ModelEntry, ModelsConfig
from desktop_rt.engine.models.kinds import kind_of, served_entry
from desktop_rt.engine.models.router import Admission, LimitReachedError, ModelRouter, ModelRuntime
from desktop_rt.engine.models.runtimes import InProcessRuntime, entry_streaming
from desktop_rt.engine.protocol.events import ServerEvent
from desktop_rt.engine.server.activity import ActivityLog
from desktop_rt.engine.server.bridge import LocalSession, SessionBridge
from desktop_rt.engine.server.captions_feed import CaptionBroadcaster
from desktop_rt.engine.server.config import ServerConfig
from desktop_rt.engine.server.connection import RealtimeConnection
from desktop_rt.engine.server.handshake import (
    REALTIME_PATH,
    HandshakeGate,
    error_body,
    is_loopback_host,
    json_response,
)
from desktop_rt.engine.server.http_guard import GuardedConnection
from desktop_rt.engine.server.local import open_local_bridge
from desktop_rt.engine.server.rest import RestEndpoint
from desktop_rt.engine.server.rest_http import TRANSCRIPTIONS_PATH, TRANSLATIONS_PATH
from desktop_rt.engine.server.routes import activity_route, inference_health, unload_route
from desktop_rt.engine.server.sessions import SessionHub
from desktop_rt.engine.server.tls import SSLContext, server_context
from desktop_rt.errors import DesktopRtError

__all__ = ["ServerConfig", "ServerError", "RealtimeServer", "LocalSession"]

log = logging.getLogger(__name__)

BackendProvider = AsrBackend | Callable[[], AsrBackend]


class ServerError(DesktopRtError):
    """The server could not start (bad address, port in use, no key on a public address)."""


class RealtimeServer:
    """Owns the websocket server thread and the models. See the module docstring.

    ``backend`` serves ``config.model_id``: either a loaded :class:`AsrBackend` (the caller
    keeps owning it) or a zero-argument callable that loads one (the server closes what it
    loaded when the model unloads or the server stops). Implements
    :class:`~desktop_rt.engine.server.connection.ConnectionHost` for its connections.
    """

    def __init__(self, config: ServerConfig, backend: BackendProvider):
        self.config = config
        self._provider = backend
        self.router: ModelRouter | None = None
        self.activity: ActivityLog | None = None
        self._hub: SessionHub | None = None
        self._primary: InProcessRuntime | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_requested: asyncio.Future[None] | None = None
        self._ready = threading.Event()
        self._start_error: BaseException | None = None
        self._admissions: dict[ServerConnection, Admission] = {}
        self._watchers: set[asyncio.Task[None]] = set()
        self._ssl: SSLContext | None = None
        self.stopping = False
        self.port: int | None = None
        self.catalog = self._catalog()
        self.rest = RestEndpoint(self)
        self.captions = CaptionBroadcaster()
        """The window's captions, for the caption page (engine/server/captions_page.py)."""
        self.gate = HandshakeGate(
            model_id=config.model_id,
            api_key=config.api_key or None,
            allowed_origins=tuple(config.allowed_origins),
            allowed_hosts=tuple(config.allowed_hosts),
            bound_host=config.host,
            health=self._health,
            model_ids=lambda: self.catalog.alias_map(config.model_id).names,
            admit=self._admit,
            routes={
                "/v1/activity": lambda request: activity_route(self.activity, request),
                "/unload": lambda request: unload_route(self.sessions.router, request),
                TRANSCRIPTIONS_PATH: self.rest.route,
                TRANSLATIONS_PATH: self.rest.route,
            },
        )

    # ---- state -----------------------------------------------------------------------------

    @property
    def url(self) -> str:
        host = self.config.host
        host = f"[{host}]" if ":" in host else host
        return f"{'wss' if self.config.tls else 'ws'}://{host}:{self.port}{REALTIME_PATH}"

    @property
    def http_url(self) -> str:
        return "http" + self.url.removeprefix("ws").removesuffix(REALTIME_PATH)

    @property
    def worker(self) -> InferenceWorker | None:
        """The primary model's inference worker (the last one, if it was unloaded since)."""
        return self._primary.worker if self._primary is not None else None

    @property
    def open_stream_count(self) -> int:
        """How many streams the primary model's inference worker serves now; 0 when none runs.

        Read-only and safe from any thread: every open session (websocket or local) on the
        primary model holds one stream. ``GET /health`` reports it as ``sessions``.
        """
        worker = self.worker
        return worker.stream_count if worker is not None and worker.running else 0

    @property
    def sessions(self) -> SessionHub:
        """The sessions of the running server; :class:`ServerError` before ``start()``."""
        if self._hub is None:
            raise ServerError("the server is not running")
        return self._hub

    # ---- models ----------------------------------------------------------------------------

    def _catalog(self) -> ModelsConfig:
        cfg = self.config
        catalog = cfg.models or ModelsConfig(entries=())
        if catalog.get(cfg.model_id) is None:  # the primary is served whatever the file says
            entry = served_entry(cfg.model_id)  # its kind, as describe_model names it
            catalog = replace(catalog, entries=(entry, *catalog.entries))
        return cfg.limited(catalog)  # the default session limit where models.toml sets none

    def _primary_runtime(self) -> InProcessRuntime:
        entry = self.catalog.get(self.config.model_id)
        if entry is None:  # _catalog() always adds it
            raise ServerError(f"the model '{self.config.model_id}' is not in the catalogue")
        streaming, worker = entry_streaming(entry, self.config.streaming), self.config.worker
        provider = self._provider
        if isinstance(provider, AsrBackend):
            backend = provider  # the caller keeps owning it
            runtime = InProcessRuntime(
                entry.id, lambda: backend, owns_backend=False, streaming=streaming, worker=worker
            )
        else:
            runtime = InProcessRuntime(entry.id, provider, streaming=streaming, worker=worker)
        self._primary = runtime
        return runtime

    def _make_runtime(self, entry: ModelEntry) -> ModelRuntime:
        """An unstarted runtime for ``entry`` (the router loads it on demand)."""
        if entry.id == self.config.model_id:
            return self._primary_runtime()
        return kind_of(entry).runtime(entry, self.config.streaming, self.config.worker)

    def start(self) -> None:
        """Load the primary model, then listen; returns once listening."""
        cfg = self.config
        if self._thread is not None:
            raise ServerError("the server is already started")
        if not is_loopback_host(cfg.host) and not cfg.api_key:
            raise ServerError(
                f"Refusing to listen on {cfg.host} without an API key: anyone on the network could "
                f"use the model. Set an API key (--api-key) or bind 127.0.0.1."
            )
        self._ssl = server_context(cfg.tls) if cfg.tls is not None else None  # TlsError if bad
        primary = self._primary_runtime()
        primary.start_now()
        self.router = ModelRouter(
            self.catalog,
            self._make_runtime,
            preloaded={cfg.model_id: primary},
            default_model=cfg.model_id,
            holds_memory=lambda entry: kind_of(entry).holds_memory,
        )
        self.activity = ActivityLog(cfg.activity_path) if cfg.record_activity else None
        self._hub = SessionHub(self.router, self.activity, cfg.limits)
        self.stopping = False
        self._ready.clear()
        self._start_error = None
        self._thread = threading.Thread(
            target=self._thread_main, name="desktop-rt-server", daemon=True
        )
        self._thread.start()
        self._ready.wait()
        if self._start_error is not None:
            error = self._start_error
            self._thread.join()
            self._thread = None
            self._shutdown_models()
            if isinstance(error, OSError):
                raise ServerError(
                    f"Could not listen on {cfg.host}:{cfg.port}: {error.strerror or error}. "
                    f"Another program may use that port; pick another with --port (0 picks a free one)."
                ) from error
            raise error

    def stop(self, timeout: float | None = 30.0) -> None:
        """Close every connection and local session, unload every model, stop the threads."""
        loop, thread = self._loop, self._thread
        if thread is threading.current_thread():
            raise ServerError(
                "stop() was called on the server's own thread; call it from another thread"
            )
        self.stopping = True
        if loop is not None and thread is not None and thread.is_alive():
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(self._request_stop)
            thread.join(timeout)
        self._thread = None
        self._loop = None
        self._ready.clear()
        self._shutdown_models()

    def __enter__(self) -> RealtimeServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _shutdown_models(self) -> None:
        """What the loop did not stop (it failed, or never ran) is stopped here."""
        if self._primary is not None:
            self._primary.stop_now()
        if self.activity is not None:
            self.activity.close()

    def _request_stop(self) -> None:
        if self._stop_requested is not None and not self._stop_requested.done():
            self._stop_requested.set_result(None)

    def _thread_main(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._serve())
        except BaseException as exc:  # reported to start(), which re-raises it
            if not self._ready.is_set():
                self._start_error = exc
            else:
                log.exception("the realtime server stopped on an error")
        finally:
            self._ready.set()
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _serve(self) -> None:
        cfg, hub = self.config, self.sessions
        stop_requested = self._stop_requested = asyncio.get_running_loop().create_future()
        async with serve(
            self._handle,
            cfg.host,
            cfg.port,
            process_request=self.gate.process_request,
            select_subprotocol=self.gate.select_subprotocol,
            max_size=cfg.max_message_bytes,
            ping_interval=cfg.ping_interval,
            compression=None,
            server_header="desktop-rt",
            ssl=self._ssl,
            create_connection=GuardedConnection,
            open_timeout=None,  # GuardedConnection bounds handshakes; REST uploads take longer
        ) as server:
            self.port = next(iter(server.sockets)).getsockname()[1]
            self._ready.set()
            await stop_requested
            self.stopping = True
            hub.close_all()
            self.rest.close()
            server.close(close_connections=True)
            await server.wait_closed()
            for watcher in list(self._watchers):
                watcher.cancel()
            await hub.router.close()

    def _health(self) -> dict[str, Any]:
        from desktop_rt import __version__

        models = self.router.snapshot() if self.router is not None else {}
        return {
            "model": self.config.model_id,
            "sessions": self.open_stream_count,
            **inference_health(self.worker),
            "models": [status.to_json() for status in models.values()],
            "version": __version__,
        }

    # ---- unloading and admission -----------------------------------------------------------

    def unload_model(self, model_id: str | None = None, timeout: float | None = 60.0) -> list[str]:
        """Unload ``model_id`` (None: all) now, ending its sessions with an error event.

        Call from any thread but the server's; returns the ids that were loaded and stopped.
        """
        loop = self._loop
        if loop is None or self.router is None:
            raise ServerError("the server is not running")
        if threading.current_thread() is self._thread:
            raise ServerError(
                "unload_model() was called on the server's own thread; await router.unload()"
            )
        return asyncio.run_coroutine_threadsafe(self.router.unload(model_id), loop).result(timeout)

    def _admit(self, connection: ServerConnection, request: Request) -> Response | None:
        """Handshake: take a concurrency slot for the connection, or refuse it with 429."""
        router = self.sessions.router
        requested = HandshakeGate.requested_model(request.path)
        requested = (router.resolve(requested) or requested) if requested else requested
        ids = router.ids
        model = (
            requested if requested in ids else ids[0] if not requested and len(ids) == 1 else None
        )
        try:
            admission = router.admit(model)
        except LimitReachedError as exc:
            body = error_body(
                str(exc),
                "rate_limit_error",
                exc.code,
                "model" if exc.scope == "model" else None,
                limit={"scope": exc.scope, "max_sessions": exc.limit, "model": exc.model},
            )
            return json_response(connection, HTTPStatus.TOO_MANY_REQUESTS, body)
        self._admissions[connection] = admission
        watcher = asyncio.get_running_loop().create_task(self._expire_admission(connection))
        self._watchers.add(watcher)
        watcher.add_done_callback(self._watchers.discard)
        return None

    async def _expire_admission(self, connection: ServerConnection) -> None:
        """A handshake that never reached the handler still gives its slot back."""
        await connection.wait_closed()
        admission = self._admissions.pop(connection, None)
        if admission is not None:
            admission.release()

    # ---- sessions --------------------------------------------------------------------------

    def open_local_session(
        self,
        on_event: Callable[[ServerEvent], None],
        *,
        emit_tentative: bool = True,
        on_closed: Callable[[], None] | None = None,
        model: str | None = None,
        whole_turns: bool = True,
    ) -> LocalSession:
        """An in-process session for the desktop window, on the same path as a websocket client.

        ``on_event(event)`` receives server event objects on the server thread. ``model``
        defaults to the primary model; another one is loaded first if need be (the session
        waits; calls made meanwhile apply once it is ready). Local sessions pin their model but
        take no concurrency slot. ``whole_turns=False``: no whole-turn decodes (a meeting's mic).
        """
        loop, hub = self._loop, self._hub
        if loop is None or hub is None or not self._ready.is_set():
            raise ServerError("the server is not running")
        model_id = model or self.config.model_id

        def make(_local: LocalSession) -> Awaitable[SessionBridge | None]:
            options = {"emit_tentative": emit_tentative, "whole_turns": whole_turns}
            return open_local_bridge(
                hub, model_id, on_event, on_closed=on_closed, captions=self.captions, **options
            )

        return LocalSession(loop, make)

    async def _handle(self, ws: ServerConnection) -> None:
        """One websocket client, from choosing its model to the close frame."""
        admission = self._admissions.pop(ws, None)
        if admission is None:  # its slot expired: the handshake was not completed in time
            return
        await RealtimeConnection(self, ws, admission).run()

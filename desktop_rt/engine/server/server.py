"""The embedded realtime server: OpenAI-Realtime-compatible transcription on localhost.

:class:`RealtimeServer` runs a websockets asyncio server on its own thread. ``start()`` loads
the primary model (``config.model_id``, from the ``backend`` it is given) and returns once the
socket listens (``.port``, ``.url``); ``stop()`` closes every connection, unloads every model
and joins the threads. The GUI embeds it; ``desktop-rt serve`` runs it headless through
:func:`serve_forever`.

With ``config.models`` (a models file) it serves several models through a
:class:`~desktop_rt.engine.models.router.ModelRouter`: each connection picks one (see
:mod:`desktop_rt.engine.server.connection`), models load on demand, unload after their ``ttl`` or by
hand (:meth:`RealtimeServer.unload_model`, ``GET /unload?model=ID``), and concurrency limits
refuse extra connections at the handshake with HTTP 429. Without it, the primary model is the
only one. Each session's activity row goes to :mod:`desktop_rt.engine.server.activity`
(``GET /v1/activity``).

Routes: ``/v1/realtime`` (websocket), ``GET /health``, ``GET /v1/models``, ``GET /v1/activity``,
``GET /unload``; the handshake rules live in :mod:`desktop_rt.engine.server.handshake`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from http import HTTPStatus
from pathlib import Path

from websockets.asyncio.server import ServerConnection, serve

from desktop_rt.engine.asr.backend import AsrBackend
from desktop_rt.engine.asr.streaming import StreamingConfig
from desktop_rt.engine.asr.worker import InferenceWorker, WorkerConfig
from desktop_rt.engine.models.catalogue import ModelEntry, ModelsConfig
from desktop_rt.engine.models.embedded import DEFAULT_MODEL_ID
from desktop_rt.engine.models.proxy import CommandRuntime
from desktop_rt.engine.models.router import Admission, LimitReachedError, ModelRouter, RouterError
from desktop_rt.engine.models.runtimes import InProcessRuntime, entry_loader, entry_streaming
from desktop_rt.engine.protocol.events import ErrorEvent, ServerEvent, TranscriptionCompleted
from desktop_rt.engine.protocol.session import RealtimeSession, SessionLimits
from desktop_rt.engine.server.activity import (
    ActivityLog,
    ActivityMeter,
    ActivityRow,
    activity_timestamp,
)
from desktop_rt.engine.server.bridge import LocalSession, SessionBridge
from desktop_rt.engine.server.connection import RealtimeConnection
from desktop_rt.engine.server.handshake import (
    REALTIME_PATH,
    HandshakeGate,
    error_body,
    is_loopback_host,
    json_response,
)
from desktop_rt.engine.server.routes import activity_route, unload_route
from desktop_rt.errors import DesktopRtError

__all__ = ["ServerConfig", "ServerError", "RealtimeServer", "LocalSession", "serve_forever"]

log = logging.getLogger(__name__)

BackendProvider = AsrBackend | Callable[[], AsrBackend]


class ServerError(DesktopRtError):
    """The server could not start (bad address, port in use, no key on a public address)."""


@dataclass(frozen=True)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8777
    api_key: str | None = None
    allowed_origins: tuple[str, ...] = ()
    model_id: str = DEFAULT_MODEL_ID
    limits: SessionLimits = field(default_factory=SessionLimits)
    streaming: StreamingConfig = StreamingConfig()
    worker: WorkerConfig = WorkerConfig()
    max_message_bytes: int = 32 * 1024 * 1024
    """Above the session's own 15 MiB append limit, so that limit answers with an error event."""
    max_outbox_events: int = 10_000
    """Events waiting for a client that stopped reading; past this it is disconnected."""
    ping_interval: float | None = 20.0
    models: ModelsConfig | None = None
    """The models to route between (the models file); None serves only ``model_id``."""
    model_name_timeout: float = 30.0
    """Seconds a client without ``?model=`` has to name its model in a ``session.update``."""
    max_pending_bytes: int = 32 * 1024 * 1024
    """Client frames kept while its model is chosen and loaded; past this the client waits."""
    activity_path: Path | None = None
    """The activity database (None: ``<data dir>/activity.sqlite3``)."""
    record_activity: bool = True


class RealtimeServer:
    """Owns the websocket server thread and the models. See the module docstring.

    ``backend`` serves ``config.model_id``: either a loaded :class:`AsrBackend` (the caller
    keeps owning it) or a zero-argument callable that loads one (the server closes what it
    loaded when the model unloads or the server stops).
    """

    def __init__(self, config: ServerConfig, backend: BackendProvider):
        self.config = config
        self._provider = backend
        self.router: ModelRouter | None = None
        self.activity: ActivityLog | None = None
        self._primary: InProcessRuntime | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_requested: asyncio.Future | None = None
        self._ready = threading.Event()
        self._start_error: BaseException | None = None
        self._bridges: set[SessionBridge] = set()
        self._admissions: dict[ServerConnection, Admission] = {}
        self._watchers: set[asyncio.Task] = set()
        self.stopping = False
        self.port: int | None = None
        self.catalog = self._catalog()
        self.gate = HandshakeGate(
            model_id=config.model_id,
            api_key=config.api_key or None,
            allowed_origins=tuple(config.allowed_origins),
            health=self._health,
            model_ids=lambda: self.catalog.ids,
            admit=self._admit,
            routes={
                "/v1/activity": lambda request: activity_route(self.activity, request),
                "/unload": lambda request: unload_route(self.router, request),
            },
        )

    # ---- lifecycle -------------------------------------------------------------------------

    @property
    def url(self) -> str:
        host = self.config.host
        host = f"[{host}]" if ":" in host else host
        return f"ws://{host}:{self.port}{REALTIME_PATH}"

    @property
    def http_url(self) -> str:
        return self.url.replace("ws://", "http://", 1).removesuffix(REALTIME_PATH)

    @property
    def worker(self) -> InferenceWorker | None:
        """The primary model's inference worker (the last one, if it was unloaded since)."""
        return self._primary.worker if self._primary is not None else None

    def _catalog(self) -> ModelsConfig:
        cfg = self.config
        catalog = cfg.models or ModelsConfig(entries=())
        if catalog.get(cfg.model_id) is None:  # the primary is served whatever the file says
            kind = (
                "llama" if cfg.model_id.lower().endswith(".gguf") else "whisper"
            )  # as describe_model names it
            entry = ModelEntry(cfg.model_id, kind, embedded=cfg.model_id == DEFAULT_MODEL_ID)
            catalog = replace(catalog, entries=(entry, *catalog.entries))
        return catalog

    def _primary_runtime(self) -> InProcessRuntime:
        entry = self.catalog.get(self.config.model_id)
        streaming = entry_streaming(entry, self.config.streaming)
        runtime = (
            InProcessRuntime(
                entry.id,
                lambda: self._provider,
                owns_backend=False,
                streaming=streaming,
                worker=self.config.worker,
            )
            if isinstance(self._provider, AsrBackend)
            else InProcessRuntime(
                entry.id, self._provider, streaming=streaming, worker=self.config.worker
            )
        )
        self._primary = runtime
        return runtime

    def _make_runtime(self, entry: ModelEntry):
        """An unstarted runtime for ``entry`` (the router loads it on demand)."""
        if entry.id == self.config.model_id:
            return self._primary_runtime()
        if entry.backend == "command":
            return CommandRuntime(entry)
        return InProcessRuntime(
            entry.id,
            entry_loader(entry),
            streaming=entry_streaming(entry, self.config.streaming),
            worker=self.config.worker,
        )

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
        primary = self._primary_runtime()
        primary.start_now()
        self.router = ModelRouter(
            self.catalog, self._make_runtime, preloaded={cfg.model_id: primary}
        )
        self.activity = ActivityLog(cfg.activity_path) if cfg.record_activity else None
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
            try:
                loop.call_soon_threadsafe(self._request_stop)
            except RuntimeError:
                pass
            thread.join(timeout)
        self._thread = None
        self._loop = None
        self._ready.clear()
        self._shutdown_models()

    def __enter__(self) -> RealtimeServer:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
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
        cfg = self.config
        self._stop_requested = asyncio.get_running_loop().create_future()
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
        ) as server:
            self.port = server.sockets[0].getsockname()[1]
            self._ready.set()
            await self._stop_requested
            self.stopping = True
            for bridge in list(self._bridges):
                bridge.close()
            server.close(close_connections=True)
            await server.wait_closed()
            for watcher in list(self._watchers):
                watcher.cancel()
            await self.router.close()

    def _health(self) -> dict:
        worker = self.worker
        from desktop_rt import __version__

        models = self.router.snapshot() if self.router is not None else {}
        return {
            "model": self.config.model_id,
            "sessions": worker.stream_count if worker is not None and worker.running else 0,
            "models": [status.to_json() for status in models.values()],
            "version": __version__,
        }

    # ---- models ----------------------------------------------------------------------------

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

    def _admit(self, connection: ServerConnection, request):
        """Handshake: take a concurrency slot for the connection, or refuse it with 429."""
        requested = HandshakeGate.requested_model(request.path)
        ids = self.router.ids
        model = (
            requested if requested in ids else ids[0] if not requested and len(ids) == 1 else None
        )
        try:
            admission = self.router.admit(model)
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

    def _new_session(
        self, model_id: str | None = None, emit_tentative: bool = False
    ) -> RealtimeSession:
        return RealtimeSession(
            model=model_id or self.config.model_id,
            limits=self.config.limits,
            emit_tentative=emit_tentative,
        )

    def _track(self, bridge: SessionBridge) -> SessionBridge:
        self._bridges.add(bridge)
        return bridge

    def open_local_session(
        self,
        on_event: Callable[[ServerEvent], None],
        *,
        emit_tentative: bool = True,
        on_closed: Callable[[], None] | None = None,
        model: str | None = None,
    ) -> LocalSession:
        """An in-process session for the desktop window, on the same path as a websocket client.

        ``on_event(event)`` receives server event objects on the server thread. ``model``
        defaults to the primary model; another one is loaded first if need be (the session
        waits; calls made meanwhile apply once it is ready). Local sessions pin their model but
        take no concurrency slot.
        """
        loop = self._loop
        if loop is None or self.router is None or not self._ready.is_set():
            raise ServerError("the server is not running")
        model_id = model or self.config.model_id

        async def make(local: LocalSession) -> SessionBridge | None:
            meter, started = ActivityMeter(), activity_timestamp()

            def finish(reason: str) -> None:
                if self.activity is not None:
                    self.activity.record(
                        ActivityRow(
                            meter.session_id,
                            started,
                            activity_timestamp(),
                            model_id,
                            "local",
                            round(meter.audio_seconds, 3),
                            meter.items,
                            meter.words,
                            None,
                            reason,
                        )
                    )
                if on_closed is not None:
                    on_closed()

            try:
                lease = await self.router.acquire(model_id)
            except RouterError as exc:
                on_event(
                    ErrorEvent(
                        f"The model '{model_id}' cannot be used: {exc}",
                        exc.code,
                        "model",
                        "server_error",
                    )
                )
                finish(f"{exc.code}: {exc}")
                return None
            if not isinstance(lease.runtime, InProcessRuntime):
                lease.release()
                on_event(
                    ErrorEvent(
                        f"The model '{model_id}' runs in another program; the window can only use "
                        f"models loaded in desktop-rt itself.",
                        "model_not_local",
                        "model",
                        "server_error",
                    )
                )
                finish("model_not_local")
                return None
            state = {"reason": "the session ended"}

            def sink(events) -> None:
                for event in events:
                    if isinstance(event, TranscriptionCompleted):
                        meter.completed(event.transcript)
                    on_event(event)

            def closed() -> None:
                self._bridges.discard(bridge)
                lease.release()
                meter.audio_seconds = session.received_seconds
                finish(state["reason"])

            def revoke(message: str) -> None:
                state["reason"] = f"model_unloaded: {message}"
                sink([ErrorEvent(message, "model_unloaded", "model", "server_error")])
                bridge.close()

            session = self._new_session(model_id, emit_tentative)
            meter.session_id = session.session_id
            bridge = SessionBridge(session, lease.runtime.worker, loop, sink, closed)
            lease.on_revoke = revoke
            return self._track(bridge)

        return LocalSession(loop, make)

    async def _handle(self, ws: ServerConnection) -> None:
        """One websocket client, from choosing its model to the close frame."""
        admission = self._admissions.pop(ws, None)
        if admission is None:  # its slot expired: the handshake was not completed in time
            return
        await RealtimeConnection(self, ws, admission).run()


def serve_forever(args) -> int:
    """``desktop-rt serve``: listen until SIGINT or SIGTERM, then stop cleanly. Returns 0.

    ``--model`` serves that one model; without it the models file is read (``--models-file``,
    default ``<config dir>/models.toml``) and the embedded model is loaded first.
    """
    import signal

    from desktop_rt.engine.models.catalogue import load_models_file
    from desktop_rt.engine.models.kinds import describe_model, open_backend

    spec = getattr(args, "model", None)
    if spec:
        mmproj = getattr(args, "mmproj", None)
        model_id, models = describe_model(spec), None
        loader = (
            (lambda: open_backend(spec, mmproj=mmproj)) if mmproj else (lambda: open_backend(spec))
        )
    else:
        models = load_models_file(getattr(args, "models_file", None))
        model_id = DEFAULT_MODEL_ID
        loader = entry_loader(models.get(DEFAULT_MODEL_ID))
    config = ServerConfig(
        host=args.host,
        port=args.port,
        api_key=args.api_key or None,
        model_id=model_id,
        models=models,
    )
    server = RealtimeServer(config, loader)
    stop = threading.Event()
    previous = {
        sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)
    }
    try:
        print(f"desktop-rt: loading model {model_id}", flush=True)
        server.start()
        if len(server.catalog.ids) > 1:
            print(
                f"desktop-rt: models {', '.join(server.catalog.ids)} (from {models.path})",
                flush=True,
            )
        print(f"desktop-rt: listening on {server.url}", flush=True)
        # Not one long wait: a signal that lands on a native thread (llama.cpp's, CTranslate2's)
        # only sets a flag, and Python runs the handler once the main thread wakes. A wait
        # without a timeout never woke, and serve ignored SIGINT/SIGTERM now and then (a
        # GGUF model: 3 stops in 8). ui/app.py wakes its loop for the same reason.
        while not stop.wait(0.2):
            pass
        print("desktop-rt: stopping", flush=True)
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0

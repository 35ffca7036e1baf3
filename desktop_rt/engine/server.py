"""The embedded realtime server: OpenAI-Realtime-compatible transcription on localhost.

:class:`RealtimeServer` runs a websockets asyncio server on its own thread and an
:class:`~desktop_rt.engine.worker.InferenceWorker` on another. ``start()`` returns once the
socket listens (``.port``, ``.url``); ``stop()`` closes every connection and joins both
threads. The GUI embeds it; ``desktop-rt serve`` runs it headless through :func:`serve_forever`.

Routes: ``/v1/realtime`` (websocket, one :class:`RealtimeSession` per connection),
``GET /health`` and ``GET /v1/models``; the handshake rules live in
:mod:`desktop_rt.engine.handshake`. The websocket handler is a thin adapter: frames go into
the session through a :class:`SessionBridge`, the session's events come back out as JSON.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
import secrets
import threading
from dataclasses import dataclass, field
from typing import Callable

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from desktop_rt.engine.backends.base import AsrBackend
from desktop_rt.engine.events import ServerEvent, to_json
from desktop_rt.engine.handshake import REALTIME_PATH, HandshakeGate, is_loopback_host
from desktop_rt.engine.models import DEFAULT_MODEL_ID
from desktop_rt.engine.session import RealtimeSession, SessionLimits
from desktop_rt.engine.session_bridge import LocalSession, SessionBridge
from desktop_rt.engine.streaming import StreamingConfig, StreamingTranscriber
from desktop_rt.engine.worker import InferenceWorker, WorkerConfig
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


class RealtimeServer:
    """Owns the websocket server thread and the inference worker. See the module docstring.

    ``backend`` is either a loaded :class:`AsrBackend` (the caller keeps owning it) or a
    zero-argument callable that loads one in :meth:`start` (closed again by :meth:`stop`).
    """

    def __init__(self, config: ServerConfig, backend: BackendProvider):
        self.config = config
        self._provider = backend
        self._backend: AsrBackend | None = None
        self._owns_backend = False
        self.worker: InferenceWorker | None = None
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop_requested: asyncio.Future | None = None
        self._ready = threading.Event()
        self._start_error: BaseException | None = None
        self._bridges: set[SessionBridge] = set()
        self.port: int | None = None
        self.gate = HandshakeGate(
            model_id=config.model_id,
            api_key=config.api_key or None,
            allowed_origins=tuple(config.allowed_origins),
            health=self._health,
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

    def start(self) -> None:
        """Load the model if needed, start the worker and listen; returns once listening."""
        cfg = self.config
        if self._thread is not None:
            raise ServerError("the server is already started")
        if not is_loopback_host(cfg.host) and not cfg.api_key:
            raise ServerError(
                f"Refusing to listen on {cfg.host} without an API key: anyone on the network could "
                f"use the model. Set an API key (--api-key) or bind 127.0.0.1."
            )
        if isinstance(self._provider, AsrBackend):
            self._backend = self._provider
        else:
            self._backend, self._owns_backend = self._provider(), True
        backend = self._backend
        self.worker = InferenceWorker(lambda: StreamingTranscriber(backend, cfg.streaming), cfg.worker)
        self.worker.start()
        self._ready.clear()
        self._start_error = None
        self._thread = threading.Thread(target=self._thread_main, name="desktop-rt-server", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._start_error is not None:
            error = self._start_error
            self._thread.join()
            self._thread = None
            self._shutdown_worker()
            if isinstance(error, OSError):
                raise ServerError(
                    f"Could not listen on {cfg.host}:{cfg.port}: {error.strerror or error}. "
                    f"Another program may use that port; pick another with --port (0 picks a free one)."
                ) from error
            raise error

    def stop(self, timeout: float | None = 30.0) -> None:
        """Close every connection and local session, then stop the server and worker threads."""
        loop, thread = self._loop, self._thread
        if thread is threading.current_thread():
            raise ServerError("stop() was called on the server's own thread; call it from another thread")
        if loop is not None and thread is not None and thread.is_alive():
            try:
                loop.call_soon_threadsafe(self._request_stop)
            except RuntimeError:
                pass
            thread.join(timeout)
        self._thread = None
        self._loop = None
        self._ready.clear()
        self._shutdown_worker()

    def __enter__(self) -> "RealtimeServer":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def _shutdown_worker(self) -> None:
        if self.worker is not None:
            self.worker.stop()
        if self._owns_backend and self._backend is not None:
            self._backend.close()
        self._backend, self._owns_backend = None, False

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
            for bridge in list(self._bridges):
                bridge.close()
            server.close(close_connections=True)
            await server.wait_closed()

    def _health(self) -> dict:
        worker = self.worker
        from desktop_rt import __version__

        return {
            "model": self.config.model_id,
            "sessions": worker.stream_count if worker is not None else 0,
            "version": __version__,
        }

    # ---- sessions --------------------------------------------------------------------------

    def _new_session(self, emit_tentative: bool = False) -> RealtimeSession:
        return RealtimeSession(model=self.config.model_id, limits=self.config.limits, emit_tentative=emit_tentative)

    def _track(self, bridge: SessionBridge) -> SessionBridge:
        self._bridges.add(bridge)
        return bridge

    def open_local_session(
        self,
        on_event: Callable[[ServerEvent], None],
        *,
        emit_tentative: bool = True,
        on_closed: Callable[[], None] | None = None,
    ) -> LocalSession:
        """An in-process session for the desktop window, on the same path as a websocket client.

        ``on_event(event)`` receives server event objects on the server thread.
        """
        loop = self._loop
        if loop is None or self.worker is None or not self._ready.is_set():
            raise ServerError("the server is not running")

        def make(local: LocalSession) -> SessionBridge:
            def sink(events) -> None:
                for event in events:
                    on_event(event)

            def closed() -> None:
                self._bridges.discard(bridge)
                if on_closed is not None:
                    on_closed()

            bridge = SessionBridge(self._new_session(emit_tentative), self.worker, loop, sink, closed)
            return self._track(bridge)

        return LocalSession(loop, make)

    async def _handle(self, ws: ServerConnection) -> None:
        """One websocket client, from session.created to the close frame."""
        requested = self.gate.requested_model(ws.request.path)
        if requested is not None and requested != self.config.model_id:
            await self._refuse(ws, requested)
            return
        outbox: collections.deque[str] = collections.deque()
        wake = asyncio.Event()
        finished = asyncio.Event()

        def sink(events) -> None:
            outbox.extend(to_json(event) for event in events)
            wake.set()

        def closed() -> None:
            self._bridges.discard(bridge)
            finished.set()
            wake.set()

        bridge = SessionBridge(self._new_session(), self.worker, asyncio.get_running_loop(), sink, closed)
        self._track(bridge)
        writer = asyncio.create_task(self._write(ws, outbox, wake, finished))
        try:
            async for message in ws:
                bridge.receive(message)
                if len(outbox) > self.config.max_outbox_events:
                    log.warning("closing a client that does not read its events")
                    await ws.close(1008, "client does not read its events")
                    break
        except ConnectionClosed:
            pass
        finally:
            ended_by_session = finished.is_set()  # the writer is closing with 1000: let it finish
            bridge.end_input()  # the socket closed: nothing more can be sent to it either
            bridge.close()
            if not ended_by_session:
                writer.cancel()
            try:
                await writer
            except (asyncio.CancelledError, ConnectionClosed):
                pass

    async def _write(self, ws: ServerConnection, outbox: collections.deque, wake: asyncio.Event, finished: asyncio.Event) -> None:
        """Send events in order; after the session asked to close, send the rest then close 1000."""
        while True:
            await wake.wait()
            wake.clear()
            while outbox:
                await ws.send(outbox.popleft())
            if finished.is_set() and not outbox:
                await ws.close(1000)
                return

    async def _refuse(self, ws: ServerConnection, requested: str) -> None:
        error = {
            "type": "error",
            "event_id": f"event_{secrets.token_hex(12)}",
            "error": {
                "type": "invalid_request_error",
                "code": "model_not_found",
                "message": f"The model '{requested}' is not served here; this server has "
                f"'{self.config.model_id}'. Connect with ?model={self.config.model_id} or without model.",
                "param": "model",
            },
        }
        try:
            await ws.send(json.dumps(error))
            await ws.close(1008, "unknown model")
        except ConnectionClosed:
            pass


def serve_forever(args) -> int:
    """``desktop-rt serve``: listen until SIGINT or SIGTERM, then stop cleanly. Returns 0."""
    import signal

    from desktop_rt.engine.model_loader import describe_model, open_backend

    spec = getattr(args, "model", None) or DEFAULT_MODEL_ID
    model_id = describe_model(spec)
    config = ServerConfig(host=args.host, port=args.port, api_key=args.api_key or None, model_id=model_id)
    server = RealtimeServer(config, lambda: open_backend(spec))
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        print(f"desktop-rt: loading model {model_id}", flush=True)
        server.start()
        print(f"desktop-rt: listening on {server.url}", flush=True)
        stop.wait()
        print("desktop-rt: stopping", flush=True)
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0

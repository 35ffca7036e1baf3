"""One websocket on ``/v1/realtime``: choose its model, wait for it, serve it, record it.

Call order: ``RealtimeConnection(host, ws, admission).run()`` returns once the connection is
over. The model comes from ``?model=``, else the only model, else the first ``session.update``;
until it is chosen and loaded nothing is sent and frames wait in a
:class:`~desktop_rt.engine.server.inbox.FrameInbox`. A refusal is one ``error`` event, then a
close frame; the model is then fixed. An in-process model is served through the host's
:class:`~desktop_rt.engine.server.sessions.SessionHub`, a ``command`` or ``remote`` model through an
:class:`~desktop_rt.engine.models.proxy.UpstreamProxy`. On close, one activity row is written.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from desktop_rt.engine.models.proxy import ProxiedRuntime, UpstreamProxy
from desktop_rt.engine.models.router import (
    Admission,
    Lease,
    LimitReachedError,
    ModelLoadError,
    ModelWaitTimeoutError,
    RouterError,
)
from desktop_rt.engine.protocol.events import ErrorEvent, ServerEvent, to_json
from desktop_rt.engine.server.activity import ActivityMeter
from desktop_rt.engine.server.config import ServerConfig
from desktop_rt.engine.server.handshake import REALTIME_PATH, HandshakeGate
from desktop_rt.engine.server.inbox import UPDATE_TYPES, FrameInbox, model_named_in
from desktop_rt.engine.server.sessions import SessionHub, unloaded_event

__all__ = ["ConnectionHost", "RealtimeConnection", "FrameInbox", "model_named_in", "UPDATE_TYPES"]

log = logging.getLogger(__name__)

T = TypeVar("T")


class ConnectionHost(Protocol):
    """What a connection uses of the server that accepted it; RealtimeServer implements it."""

    @property
    def config(self) -> ServerConfig: ...

    @property
    def stopping(self) -> bool:
        """The server is stopping (a connection closed now was closed by it)."""
        ...

    @property
    def sessions(self) -> SessionHub: ...


class _Refusal(Exception):
    def __init__(
        self, code: str, message: str, close_code: int, error_type: str = "invalid_request_error"
    ):
        super().__init__(message)
        self.code, self.message, self.close_code = code, message, close_code
        self.error_type = error_type


class _ClientLeft(Exception):
    pass


@dataclass
class _Outbox:
    """Events for the client, sent in order by one writer task; after ``finish`` the writer
    sends what is left, then closes with ``close_code``."""

    frames: collections.deque[str] = field(default_factory=collections.deque)
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    close_code: int = 1000
    close_reason: str = ""

    def put(self, events: Sequence[ServerEvent]) -> None:
        self.frames.extend(to_json(event) for event in events)
        self.wake.set()

    def finish(self) -> None:
        self.finished.set()
        self.wake.set()


class RealtimeConnection:
    """See the module docstring."""

    def __init__(self, host: ConnectionHost, ws: ServerConnection, admission: Admission):
        self.host = host
        self.hub = host.sessions
        self.ws = ws
        self.admission = admission
        self.inbox = FrameInbox(host.config.max_pending_bytes)
        self.meter = ActivityMeter()
        self.model: str | None = None
        self.reason: str | None = None
        self.close_code: int | None = None
        self._reader: asyncio.Task[None] | None = None

    @property
    def models_here(self) -> str:
        return ", ".join(self.hub.router.ids)

    @property
    def path(self) -> str:
        """The request path of the handshake, query included."""
        return self.ws.request.path if self.ws.request is not None else REALTIME_PATH

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        named: asyncio.Future[str | None] = loop.create_future()
        reader = self._reader = loop.create_task(self._read(named))
        lease: Lease | None = None
        try:
            self.model = await self._choose_model(named)
            self.admission.bind(self.model)
            lease = await self._until_left(self.hub.router.acquire(self.model))
            if isinstance(lease.runtime, ProxiedRuntime):
                await self._proxy(lease, lease.runtime)
            else:
                await self._serve_in_process(lease)
        except _Refusal as refusal:
            await self._refuse(refusal)
        except RouterError as exc:
            await self._refuse(self._refusal_for(exc))
        except _ClientLeft:
            self.reason = self.reason or "the client left while its model was chosen or loaded"
        finally:
            if lease is not None:
                lease.release()
            self.admission.release()
            reader.cancel()
            self._record()

    # ---- choosing the model ----------------------------------------------------------------

    async def _read(self, named: asyncio.Future[str | None]) -> None:
        try:
            async for frame in self.ws:
                if not named.done():
                    is_update, model = model_named_in(frame)
                    if is_update:
                        named.set_result(model)
                await self.inbox.put(frame)
        except ConnectionClosed:
            pass
        finally:
            self.inbox.close()

    async def _until_left(self, awaitable: Awaitable[T]) -> T:
        """Await ``awaitable``, unless the client leaves first (then :class:`_ClientLeft`)."""
        task = asyncio.ensure_future(awaitable)
        assert self._reader is not None  # run() started it
        await asyncio.wait({task, self._reader}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            return task.result()
        task.cancel()
        with contextlib.suppress(BaseException):  # cancelled or failed: the client is gone anyway
            await task
        raise _ClientLeft()

    async def _choose_model(self, named: asyncio.Future[str | None]) -> str:
        requested = HandshakeGate.requested_model(self.path)
        if requested:
            return self._known(requested, "?model=")
        ids = self.hub.router.ids
        if len(ids) == 1:
            return ids[0]
        timeout = self.host.config.model_name_timeout
        try:
            model = await self._until_left(asyncio.wait_for(asyncio.shield(named), timeout))
        except TimeoutError:
            raise _Refusal(
                "model_required",
                f"no model: name it in the session.update event, sent within {timeout:g} s of connecting "
                f"(session.audio.input.transcription.model or session.model), or connect with ?model=ID. "
                f"Models here: {self.models_here}.",
                1008,
            ) from None
        if model is None:
            raise _Refusal(
                "model_required",
                f"no model: name it in the session.update event (session.audio.input.transcription.model or "
                f"session.model), or connect with ?model=ID; the first session.update named none. "
                f"Models here: {self.models_here}.",
                1008,
            )
        return self._known(model, "session.update")

    def _known(self, model: str, where: str) -> str:
        model_id = self.hub.router.resolve(model)  # an id, or an alias of one
        if model_id is None:
            self.model = model = model if len(model) <= 100 else model[:97] + "..."
            raise _Refusal(
                "model_not_found",
                f"The model '{model}' (from {where}) is not served here; models here: {self.models_here}. "
                f"Name one of them (GET /v1/models lists them), or add it with `desktop-rt models add`.",
                1008,
            )
        return model_id

    def _refusal_for(self, exc: RouterError) -> _Refusal:
        if isinstance(exc, LimitReachedError):
            return _Refusal(exc.code, str(exc), 1013, "rate_limit_error")
        if isinstance(exc, ModelWaitTimeoutError):
            return _Refusal(exc.code, str(exc), 1013, "server_error")
        if isinstance(exc, ModelLoadError):
            return _Refusal(
                "model_load_failed",
                f"The model '{self.model}' failed to load: {exc}. Check its entry with `desktop-rt models list` "
                f"and the server log, then connect again.",
                1011,
                "server_error",
            )
        return _Refusal(exc.code, str(exc), 1011, "server_error")

    async def _refuse(self, refusal: _Refusal) -> None:
        self.reason = f"{refusal.code}: {refusal.message}"
        self.close_code = refusal.close_code
        event = ErrorEvent(refusal.message, refusal.code, "model", refusal.error_type)
        try:
            await self.ws.send(to_json(event))
            await self.ws.close(refusal.close_code, refusal.code)
        except ConnectionClosed:
            pass

    # ---- serving ---------------------------------------------------------------------------

    async def _proxy(self, lease: Lease, runtime: ProxiedRuntime) -> None:
        target = runtime.upstream(self.path)
        proxy = UpstreamProxy(self.ws, target, self.meter, self.ws.subprotocol)
        lease.on_revoke = self._spawn_end
        await proxy.connect()  # ModelLoadError names the server
        code, closed_by = await proxy.run(self.inbox)
        self.reason = (
            self.reason
            or f"{'the model server' if closed_by == 'upstream' else 'the client'} closed ({code})"
        )

    def _spawn_end(self, message: str) -> None:
        """The model was unloaded by hand: tell the client, then close."""
        self.reason = f"model_unloaded: {message}"
        self.close_code = 1001

        async def end() -> None:
            try:
                await self.ws.send(to_json(unloaded_event(message)))
                await self.ws.close(1001, "model unloaded")
            except ConnectionClosed:
                pass

        asyncio.get_running_loop().create_task(end())

    async def _serve_in_process(self, lease: Lease) -> None:
        outbox = _Outbox()

        def revoked(message: str) -> None:
            self.reason, self.close_code = f"model_unloaded: {message}", 1001
            outbox.close_code, outbox.close_reason = 1001, "model unloaded"

        bridge = self.hub.open(
            lease, self.meter, outbox.put, on_closed=outbox.finish, on_revoked=revoked
        )
        writer = asyncio.ensure_future(self._write(outbox))
        try:
            async for frame in self.inbox:
                bridge.receive(frame)
                if len(outbox.frames) > self.host.config.max_outbox_events:
                    log.warning("closing a client that does not read its events")
                    self.reason, self.close_code = "the client did not read its events", 1008
                    await self.ws.close(1008, "client does not read its events")
                    break
        finally:
            ended_by_session = outbox.finished.is_set()  # the writer is closing: let it finish
            if ended_by_session and self.reason is None:
                self.reason = "the session ended (final commit)"
            bridge.end_input()
            bridge.close()
            if not ended_by_session:
                writer.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionClosed):
                await writer
            # The writer's exception holds this frame: without the del, the session and its
            # native VAD contexts would wait for a full garbage collection.
            del writer

    async def _write(self, outbox: _Outbox) -> None:
        """Send events in order; after the session asked to close, send the rest then close."""
        while True:
            await outbox.wake.wait()
            outbox.wake.clear()
            while outbox.frames:
                await self.ws.send(outbox.frames.popleft())
            if outbox.finished.is_set() and not outbox.frames:
                await self.ws.close(outbox.close_code, outbox.close_reason)
                return

    # ---- activity --------------------------------------------------------------------------

    def _record(self) -> None:
        rcvd = self.ws.protocol.close_rcvd
        code = self.close_code or (rcvd.code if rcvd is not None else self.ws.close_code)
        if self.reason is None:
            self.reason = (
                "the server stopped" if self.host.stopping else f"the client closed ({code})"
            )
        address = self.ws.remote_address
        client = f"{address[0]}:{address[1]}" if address else "unknown"
        self.hub.record(self.meter, self.model, client, code, self.reason)

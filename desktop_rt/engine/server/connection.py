"""One websocket on ``/v1/realtime``: choose its model, wait for it, serve it, record it.

The model comes from ``?model=``; else, with one model configured, that one; else from the
first ``session.update`` (or ``transcription_session.update``), read from ``session.model``,
``session.audio.input.transcription.model``, ``session.input_audio_transcription.model`` in
that order. Nothing is sent until the model is chosen and loaded (``session.created`` names
it), and every frame received meanwhile is kept and handled in order afterwards. No model named
in time (``ServerConfig.model_name_timeout``), a first update naming none, an unknown model, a
failed load or a full limit is answered with an ``error`` event whose message says what to do,
then a close frame. The model is then fixed for the connection.

Frames are read by one task into a :class:`FrameInbox` (bounded in bytes; past the bound the
client waits, as TCP backpressure). An in-process model gets a
:class:`~desktop_rt.engine.server.bridge.SessionBridge`; a ``command`` model gets an
:class:`~desktop_rt.engine.models.proxy.UpstreamProxy`. On close, one activity row is written.
"""

from __future__ import annotations

import asyncio
import collections
import json
import logging
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from websockets.exceptions import ConnectionClosed

from desktop_rt.engine.models.proxy import CommandRuntime, UpstreamProxy
from desktop_rt.engine.models.router import (
    Admission,
    Lease,
    LimitReachedError,
    ModelLoadError,
    RouterError,
)
from desktop_rt.engine.protocol.events import ErrorEvent, TranscriptionCompleted, to_json
from desktop_rt.engine.server.activity import ActivityMeter, ActivityRow, activity_timestamp
from desktop_rt.engine.server.bridge import SessionBridge
from desktop_rt.engine.server.handshake import HandshakeGate

if TYPE_CHECKING:
    from desktop_rt.engine.server.server import RealtimeServer

__all__ = ["FrameInbox", "RealtimeConnection", "model_named_in", "UPDATE_TYPES"]

log = logging.getLogger(__name__)

UPDATE_TYPES = ("session.update", "transcription_session.update")
_MODEL_PATHS = (
    ("model",),
    ("audio", "input", "transcription", "model"),
    ("input_audio_transcription", "model"),
)
_MAX_UPDATE_CHARS = 1 << 20
EOF = None


def model_named_in(frame: str | bytes) -> tuple[bool, str | None]:
    """``(is a session update, the model it names or None)`` for one client frame."""
    if not isinstance(frame, str) or len(frame) > _MAX_UPDATE_CHARS or "update" not in frame:
        return False, None
    try:
        event = json.loads(frame)
    except (ValueError, RecursionError):
        return False, None
    if not isinstance(event, dict) or event.get("type") not in UPDATE_TYPES:
        return False, None
    for path in _MODEL_PATHS:
        value = event.get("session")
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, str) and value.strip():
            return True, value.strip()
    return True, None


def _size(frame: str | bytes) -> int:
    return len(frame) if frame is not EOF else 0


class FrameInbox:
    """Client frames in arrival order, then ``EOF`` (None). Past ``max_bytes`` ``put`` waits."""

    def __init__(self, max_bytes: int):
        self._frames: collections.deque = collections.deque()
        self._bytes = 0
        self._max = max_bytes
        self._readable = asyncio.Event()
        self._room = asyncio.Event()
        self._room.set()

    async def put(self, frame: str | bytes) -> None:
        self._frames.append(frame)
        self._bytes += _size(frame)
        self._readable.set()
        if self._bytes > self._max:
            self._room.clear()
            await self._room.wait()

    def close(self) -> None:
        self._frames.append(EOF)
        self._readable.set()

    async def get(self) -> str | bytes | None:
        while not self._frames:
            self._readable.clear()
            await self._readable.wait()
        frame = self._frames.popleft()
        self._bytes -= _size(frame)
        if self._bytes <= self._max:
            self._room.set()
        return frame

    async def __aiter__(self) -> AsyncIterator[str | bytes]:
        while (frame := await self.get()) is not EOF:
            yield frame


class _Refusal(Exception):
    def __init__(
        self, code: str, message: str, close_code: int, error_type: str = "invalid_request_error"
    ):
        super().__init__(message)
        self.code, self.message, self.close_code, self.error_type = (
            code,
            message,
            close_code,
            error_type,
        )


class _ClientLeft(Exception):
    pass


class RealtimeConnection:
    """See the module docstring. ``run()`` returns once the connection is over."""

    def __init__(self, server: RealtimeServer, ws, admission: Admission):
        self.server = server
        self.ws = ws
        self.admission = admission
        self.inbox = FrameInbox(server.config.max_pending_bytes)
        self.meter = ActivityMeter()
        self.model: str | None = None
        self.started_at = activity_timestamp()
        self.reason: str | None = None
        self.close_code: int | None = None
        self._named: asyncio.Future | None = None
        self._reader: asyncio.Task | None = None

    @property
    def models_here(self) -> str:
        return ", ".join(self.server.router.ids)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        self._named = loop.create_future()
        self._reader = loop.create_task(self._read())
        lease: Lease | None = None
        try:
            self.model = await self._choose_model()
            self.admission.bind(self.model)
            lease = await self._until_left(self.server.router.acquire(self.model))
            if isinstance(lease.runtime, CommandRuntime):
                await self._proxy(lease)
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
            self._reader.cancel()
            self._record()

    # ---- choosing the model ----------------------------------------------------------------

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                if not self._named.done():
                    is_update, model = model_named_in(frame)
                    if is_update:
                        self._named.set_result(model)
                await self.inbox.put(frame)
        except ConnectionClosed:
            pass
        finally:
            self.inbox.close()

    async def _until_left(self, awaitable):
        """Await ``awaitable``, unless the client leaves first (then :class:`_ClientLeft`)."""
        task = asyncio.ensure_future(awaitable)
        await asyncio.wait({task, self._reader}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            return task.result()
        task.cancel()
        try:
            await task
        except BaseException:  # noqa: BLE001 - cancelled or failed: the client is gone anyway
            pass
        raise _ClientLeft()

    async def _choose_model(self) -> str:
        requested = HandshakeGate.requested_model(self.ws.request.path)
        if requested:
            return self._known(requested, "?model=")
        ids = self.server.router.ids
        if len(ids) == 1:
            return ids[0]
        timeout = self.server.config.model_name_timeout
        try:
            named = await self._until_left(asyncio.wait_for(asyncio.shield(self._named), timeout))
        except TimeoutError:
            raise _Refusal(
                "model_required",
                f"no model: name it in the session.update event, sent within {timeout:g} s of connecting "
                f"(session.audio.input.transcription.model or session.model), or connect with ?model=ID. "
                f"Models here: {self.models_here}.",
                1008,
            ) from None
        if named is None:
            raise _Refusal(
                "model_required",
                f"no model: name it in the session.update event (session.audio.input.transcription.model or "
                f"session.model), or connect with ?model=ID; the first session.update named none. "
                f"Models here: {self.models_here}.",
                1008,
            )
        return self._known(named, "session.update")

    def _known(self, model: str, where: str) -> str:
        if model not in self.server.router.ids:
            self.model = model
            raise _Refusal(
                "model_not_found",
                f"The model '{model}' (from {where}) is not served here; models here: {self.models_here}. "
                f"Name one of them (GET /v1/models lists them), or add it with `desktop-rt models add`.",
                1008,
            )
        return model

    def _refusal_for(self, exc: RouterError) -> _Refusal:
        if isinstance(exc, LimitReachedError):
            return _Refusal(exc.code, str(exc), 1013, "rate_limit_error")
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

    async def _proxy(self, lease: Lease) -> None:
        runtime: CommandRuntime = lease.runtime
        proxy = UpstreamProxy(
            self.ws, runtime.realtime_url(self.ws.request.path), self.meter, self.ws.subprotocol
        )
        lease.on_revoke = lambda message: self._spawn_end(message)
        try:
            await proxy.connect()
        except ModelLoadError as exc:
            raise ModelLoadError(f"{exc} (its command: {runtime.entry.cmd})") from None
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
                await self.ws.send(
                    to_json(ErrorEvent(message, "model_unloaded", "model", "server_error"))
                )
                await self.ws.close(1001, "model unloaded")
            except ConnectionClosed:
                pass

        asyncio.get_running_loop().create_task(end())

    async def _serve_in_process(self, lease: Lease) -> None:
        server = self.server
        outbox: collections.deque[str] = collections.deque()
        wake = asyncio.Event()
        finished = asyncio.Event()
        close = {"code": 1000, "reason": ""}

        def sink(events) -> None:
            for event in events:
                if isinstance(event, TranscriptionCompleted):
                    self.meter.completed(event.transcript)
                outbox.append(to_json(event))
            wake.set()

        def closed() -> None:
            server._bridges.discard(bridge)
            finished.set()
            wake.set()

        def revoke(message: str) -> None:
            self.reason, self.close_code = f"model_unloaded: {message}", 1001
            close.update(code=1001, reason="model unloaded")
            sink([ErrorEvent(message, "model_unloaded", "model", "server_error")])
            bridge.close()

        session = server._new_session(lease.model_id)
        self.meter.session_id = session.session_id
        bridge = SessionBridge(
            session, lease.runtime.worker, asyncio.get_running_loop(), sink, closed
        )
        server._bridges.add(bridge)
        lease.on_revoke = revoke
        writer = asyncio.ensure_future(self._write(outbox, wake, finished, close))
        try:
            async for frame in self.inbox:
                bridge.receive(frame)
                if len(outbox) > server.config.max_outbox_events:
                    log.warning("closing a client that does not read its events")
                    self.reason, self.close_code = "the client did not read its events", 1008
                    await self.ws.close(1008, "client does not read its events")
                    break
        finally:
            ended_by_session = finished.is_set()  # the writer is closing: let it finish
            if ended_by_session and self.reason is None:
                self.reason = "the session ended (final commit)"
            bridge.end_input()
            bridge.close()
            if not ended_by_session:
                writer.cancel()
            try:
                await writer
            except (asyncio.CancelledError, ConnectionClosed):
                pass
            self.meter.audio_seconds = session.received_seconds

    async def _write(
        self, outbox: collections.deque, wake: asyncio.Event, finished: asyncio.Event, close: dict
    ) -> None:
        """Send events in order; after the session asked to close, send the rest then close."""
        while True:
            await wake.wait()
            wake.clear()
            while outbox:
                await self.ws.send(outbox.popleft())
            if finished.is_set() and not outbox:
                await self.ws.close(close["code"], close["reason"])
                return

    # ---- activity --------------------------------------------------------------------------

    def _record(self) -> None:
        activity = self.server.activity
        if activity is None:
            return
        rcvd = self.ws.protocol.close_rcvd
        code = self.close_code or (rcvd.code if rcvd is not None else self.ws.close_code)
        if self.reason is None:
            self.reason = (
                "the server stopped" if self.server.stopping else f"the client closed ({code})"
            )
        address = self.ws.remote_address
        client = f"{address[0]}:{address[1]}" if address else "unknown"
        activity.record(
            ActivityRow(
                self.meter.session_id,
                self.started_at,
                activity_timestamp(),
                self.model,
                client,
                round(self.meter.audio_seconds, 3),
                self.meter.items,
                self.meter.words,
                code,
                self.reason,
            )
        )

"""Models served by an external realtime server that desktop-rt starts on demand.

:class:`CommandRuntime` starts a ``command`` entry's ``cmd`` with a free loopback port in place
of ``${PORT}`` (in its own process group, the entry's ``env`` added, its output to this log). It
is ready once ``GET /health`` answers 200, and stopped (SIGTERM to its group, SIGKILL after
10 s) when the router unloads it. :class:`UpstreamProxy` joins one client websocket to that
server's ``/v1/realtime`` and passes frames through untouched and in order (first those sent
while the model started), with the query's ``model`` set to ``options.upstream_model`` (default:
the id). When either side closes, the other is closed with the same code and reason. Every
proxied runtime (this one, :class:`~desktop_rt.engine.models.remote.RemoteRuntime`) is a
:class:`ProxiedRuntime`: it names the :class:`UpstreamTarget` a connection is joined to.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import shlex
import signal
import socket
import ssl
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import parse_qsl, urlencode, urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.typing import Subprotocol

from desktop_rt.engine.models.entry import ModelEntry
from desktop_rt.engine.models.router_types import ModelLoadError
from desktop_rt.engine.server.activity import ActivityMeter

__all__ = [
    "CommandRuntime",
    "ProxiedRuntime",
    "UpstreamProxy",
    "UpstreamTarget",
    "upstream_query",
    "free_port",
    "http_status",
]

log = logging.getLogger(__name__)

DEFAULT_START_TIMEOUT = 120.0
STOP_GRACE = 10.0
_SENDABLE = {1000, 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 1012, 1013, 1014}


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


async def http_status(host: str, port: int, path: str, timeout: float = 5.0) -> int:
    """The status code of ``GET path`` (raises OSError / TimeoutError / ValueError)."""

    async def get() -> int:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write(
                f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n\r\n".encode()
            )
            await writer.drain()
            line = await reader.readline()
            return int(line.split()[1])
        finally:
            writer.close()

    try:
        return await asyncio.wait_for(get(), timeout)
    except IndexError:
        raise ValueError("not an HTTP answer") from None


@dataclass(frozen=True)
class UpstreamTarget:
    """Where one proxied connection goes: its URL, the headers sent there (an API key), the TLS
    context for ``wss://`` (None: the system's CAs), and what the server is, for errors."""

    url: str
    headers: tuple[tuple[str, str], ...] = ()
    ssl: ssl.SSLContext | None = None
    what: str = ""


class ProxiedRuntime(ABC):
    """A model served by another realtime server: its connections go through an
    :class:`UpstreamProxy` to :meth:`upstream`."""

    entry: ModelEntry

    @property
    @abstractmethod
    def alive(self) -> bool: ...

    @abstractmethod
    async def start(self) -> None: ...

    @abstractmethod
    async def stop(self) -> None: ...

    @abstractmethod
    def upstream(self, request_path: str) -> UpstreamTarget:
        """The target of a client that connected with ``request_path`` (its query is kept)."""


class CommandRuntime(ProxiedRuntime):
    """An external server for one ``command`` entry. ``start`` raises :class:`ModelLoadError`."""

    def __init__(self, entry: ModelEntry, host: str = "127.0.0.1"):
        self.entry = entry
        self.host = host
        self.start_timeout = float(entry.option("start_timeout", DEFAULT_START_TIMEOUT))
        self.port: int | None = None
        self.process: asyncio.subprocess.Process | None = None
        self._output: collections.deque[str] = collections.deque(maxlen=20)
        self._reader: asyncio.Task[None] | None = None

    def argv(self, port: int) -> list[str]:
        return shlex.split(
            (self.entry.cmd or "").replace("${PORT}", str(port)), posix=os.name != "nt"
        )

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    def realtime_url(self, request_path: str) -> str:
        upstream_model = self.entry.option("upstream_model") or self.entry.id
        return f"ws://{self.host}:{self.port}/v1/realtime?{upstream_query(request_path, upstream_model)}"

    def upstream(self, request_path: str) -> UpstreamTarget:
        return UpstreamTarget(
            self.realtime_url(request_path), what=f"its command: {self.entry.cmd}"
        )

    async def start(self) -> None:
        port = free_port(self.host)
        argv = self.argv(port)
        env = {**os.environ, **dict(self.entry.env)}
        try:
            self.process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                env=env,
                start_new_session=os.name != "nt",
            )
        except (OSError, ValueError) as exc:
            why = (exc.strerror if isinstance(exc, OSError) else None) or exc
            raise ModelLoadError(
                f"could not start '{argv[0] if argv else ''}' ({why}); "
                f"check the cmd of '{self.entry.id}' in models.toml"
            ) from None
        self.port = port
        self._reader = asyncio.get_running_loop().create_task(self._log_output(self.process))
        log.info(
            "model %s: started %s (pid %s, port %s)", self.entry.id, argv[0], self.process.pid, port
        )
        try:
            await self._wait_healthy(self.process, port)
        except BaseException:
            await self.stop()
            raise

    async def _wait_healthy(self, process: asyncio.subprocess.Process, port: int) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.start_timeout
        exited = loop.create_task(process.wait())
        try:
            while True:
                if exited.done():
                    await self._drain_output()
                    raise ModelLoadError(
                        f"its command exited with code {exited.result()} before answering GET /health. "
                        f"Its last output: {self.output_tail() or '(none)'}"
                    )
                try:
                    if await http_status(self.host, port, "/health") == 200:
                        return
                except (OSError, TimeoutError, ValueError):
                    pass
                remaining = deadline - loop.time()
                if remaining <= 0:
                    raise ModelLoadError(
                        f"its command did not answer GET /health on port {port} within "
                        f"{self.start_timeout:g} s; raise options.start_timeout or check the cmd. "
                        f"Its last output: {self.output_tail() or '(none)'}"
                    )
                await asyncio.wait(
                    {exited}, timeout=min(0.25, remaining)
                )  # the next probe, or its exit
        finally:
            exited.cancel()

    def output_tail(self) -> str:
        return " | ".join(self._output)

    async def _log_output(self, process: asyncio.subprocess.Process) -> None:
        stream = process.stdout
        while stream is not None and (line := await stream.readline()):
            text = line.decode("utf-8", "replace").rstrip()
            self._output.append(text)
            log.info("[%s] %s", self.entry.id, text)

    async def _drain_output(self) -> None:
        if self._reader is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._reader), 5)

    @staticmethod
    def _signal(process: asyncio.subprocess.Process, sig: int) -> None:
        try:
            if os.name != "nt":
                os.killpg(process.pid, sig)
            elif sig == signal.SIGTERM:
                process.terminate()
            else:
                process.kill()
        except ProcessLookupError:
            pass

    async def stop(self) -> None:
        process = self.process
        if process is None:
            return
        if process.returncode is None:
            self._signal(process, signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), STOP_GRACE)
            except TimeoutError:
                log.warning("model %s: the command ignored SIGTERM; killing it", self.entry.id)
                self._signal(process, getattr(signal, "SIGKILL", signal.SIGTERM))
                await process.wait()
        elif os.name != "nt":
            self._signal(process, signal.SIGTERM)  # the leader exited: its group may not have
        await self._drain_output()
        log.info("model %s: command stopped (exit code %s)", self.entry.id, process.returncode)


def upstream_query(request_path: str, model: str) -> str:
    """The client's query string with ``model`` set to the upstream's name for the model."""
    params = [
        (k, v)
        for k, v in parse_qsl(urlsplit(request_path).query, keep_blank_values=True)
        if k != "model"
    ]
    return urlencode(params + [("model", model)])


def _sendable(code: int | None) -> int:
    if code == 1005 or code is None:
        return 1000
    return code if code in _SENDABLE or 3000 <= code < 5000 else 1011


class UpstreamProxy:
    """Passes one client's frames to the external server and its frames back; see the module."""

    def __init__(
        self,
        client: ServerConnection,
        target: UpstreamTarget,
        meter: ActivityMeter,
        subprotocol: str | None = None,
    ):
        self.client = client
        self.target = target
        self.url = target.url
        self.meter = meter
        self.subprotocol = subprotocol
        self.upstream: ClientConnection | None = None
        self.closed_by: str | None = None

    async def connect(self) -> None:
        offered = (
            [Subprotocol(self.subprotocol)]
            if self.subprotocol and not self.subprotocol.startswith("openai-insecure")
            else None
        )
        try:
            self.upstream = await connect(
                self.url,
                additional_headers=list(self.target.headers),
                ssl=self.target.ssl,
                subprotocols=offered,
                max_size=None,
                ping_interval=None,
                compression=None,
                open_timeout=30,
            )
        except (OSError, InvalidHandshake, TimeoutError) as exc:
            what = f" ({self.target.what})" if self.target.what else ""
            raise ModelLoadError(
                f"its server did not accept the websocket at {self.url}: {exc}{what}"
            ) from None

    async def run(self, frames: AsyncIterator[str | bytes]) -> tuple[int | None, str]:
        """Pass frames both ways until both sides closed; returns (close code, who closed first)."""
        upstream = self.upstream
        if upstream is None:
            raise RuntimeError("UpstreamProxy.run() before connect()")
        to_upstream = asyncio.ensure_future(self._client_to_upstream(upstream, frames))
        to_client = asyncio.ensure_future(self._upstream_to_client(upstream))
        try:
            await asyncio.wait({to_upstream, to_client}, return_when=asyncio.FIRST_COMPLETED)
            if self.closed_by == "upstream":
                await self.client.close(_sendable(upstream.close_code), upstream.close_reason or "")
            else:
                await upstream.close(
                    _sendable(self.client.close_code), self.client.close_reason or ""
                )
            await asyncio.wait({to_upstream, to_client}, timeout=STOP_GRACE)
        finally:
            to_upstream.cancel()
            to_client.cancel()
            await upstream.close()
        if self.closed_by == "upstream":
            return upstream.close_code, "upstream"
        return self.client.close_code, "client"

    async def _client_to_upstream(
        self, upstream: ClientConnection, frames: AsyncIterator[str | bytes]
    ) -> None:
        async for frame in frames:
            self.meter.client_frame(frame)
            try:
                await upstream.send(frame)
            except ConnectionClosed:
                self.closed_by = self.closed_by or "upstream"
                return
        self.closed_by = self.closed_by or "client"

    async def _upstream_to_client(self, upstream: ClientConnection) -> None:
        while True:
            try:
                frame = await upstream.recv()
            except ConnectionClosed:
                self.closed_by = self.closed_by or "upstream"
                return
            self.meter.server_frame(frame)
            try:
                await self.client.send(frame)
            except ConnectionClosed:
                self.closed_by = self.closed_by or "client"
                return
